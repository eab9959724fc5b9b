import {Console} from 'node:console';

// jest replaces console with a buffered one; keep plain stdout/stderr so that
// anything a test prints reaches the terminal in order.
globalThis.console = new Console({stdout: process.stdout, stderr: process.stderr});
