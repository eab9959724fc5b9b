import {AutoctxError, environmentError, isAutoctxError} from '../errors.js';

// How an error reaches the user, shared by the oclif commands and the fast path (no oclif here).

/**
 * Map anything thrown to a typed error: ours as is, a refusing environment as exit 9, oclif's parse errors as USAGE,
 * the rest INTERNAL.
 * `whileParsing`: the command line was still being read, so an oclif error (a flag given without its value, twice, or
 * with a value outside its choices: plain CLIErrors, without `parse`) is the user's, not a bug.
 */
export function toAutoctxError(error: unknown, whileParsing = false): AutoctxError {
  // A flag's own check raised a typed error; oclif wrapped its message in lines of its own.
  if (isAutoctxError(error))
    return error.message.includes('\n') ? new AutoctxError(error.code, firstLine(error.message), error.data) : error;
  const environment = environmentError(error);
  if (environment) return environment;
  const e = error as {message?: string; oclif?: {exit?: number}; code?: string; parse?: unknown};
  // oclif's parser errors (unknown flag, missing argument, failed validation) carry `parse`.
  if (e?.oclif?.exit === 2 || e?.parse !== undefined || (whileParsing && e?.oclif !== undefined)) {
    return new AutoctxError('USAGE', firstLine(e.message ?? 'invalid invocation'));
  }
  return new AutoctxError('INTERNAL', `unexpected error (this is a bug): ${firstLine(e?.message ?? String(error))}`);
}

function firstLine(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ')
    .replace(/^Parsing --[a-z-]+\s+/, '')
    .replace(/\s+See more help with --help$/, '');
}

/** The error envelope of --json: code, message, exit code, and the error's data when it has any. */
export function errorEnvelope(e: AutoctxError): {status: 'error'; error: Record<string, unknown>} {
  return {
    status: 'error',
    error: {code: e.code, message: e.message, exit_code: e.exitCode, ...(e.data ? {data: e.data} : {})},
  };
}
