import {Console} from 'node:console';
import {afterAll} from '@jest/globals';
import {removeTempDirs} from './tree.js';

// jest replaces console with a buffered one; keep plain stdout/stderr so that
// anything a test prints reaches the terminal in order.
globalThis.console = new Console({stdout: process.stdout, stderr: process.stderr});

// No test leaves a folder behind in the system's temporary folder, whatever its outcome.
afterAll(() => removeTempDirs());
