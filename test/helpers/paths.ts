import path from 'node:path';
import {fileURLToPath} from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = path.join(PROJECT_ROOT, 'test/fixtures/upstream-autocontext');
export const SAMPLE_KNOWLEDGE = path.join(FIXTURES, 'sample-knowledge/knowledge');
