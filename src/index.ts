/** autoctx as a library: the pure surface, the errors and the statistics. */
export * from './public/context-bundles.js';
export * as stats from './public/stats.js';
export {AutoctxError, ERROR_CODES, EXIT, isAutoctxError, type ErrorCode, type ExitCode} from './errors.js';
