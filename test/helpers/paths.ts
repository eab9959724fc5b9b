import path from 'node:path';
import {fileURLToPath} from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = path.join(PROJECT_ROOT, 'test/fixtures/upstream-autocontext');
export const SAMPLE_KNOWLEDGE = path.join(FIXTURES, 'sample-knowledge/knowledge');
/**
 * A richer tree the Python implementation wrote: a campaign, an audit hold, its own rollbacks, schema-1 evidence (its
 * README).
 */
export const RICH_KNOWLEDGE = path.join(PROJECT_ROOT, 'test/fixtures/upstream-rich/knowledge');
export const RICH_LEGACY_POLICY = path.join(PROJECT_ROOT, 'test/fixtures/upstream-rich/legacy-policy.json');
