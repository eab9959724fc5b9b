import {Command, Flags} from '@oclif/core';
import {canonicalJson} from '../canonical/index.js';
import {AutoctxError, isAutoctxError} from '../errors.js';
import {enableColour, paint} from './style.js';

/** --knowledge and --scenario, shared by every command that reads a knowledge tree. */
export const storeFlags = {
  knowledge: Flags.string({
    char: 'k',
    summary: 'Knowledge root (default: $AUTOCTX_KNOWLEDGE, else ./knowledge).',
    helpValue: 'DIR',
  }),
  scenario: Flags.string({char: 's', summary: 'Scenario; may be left out when the root holds exactly one.', helpValue: 'S'}),
};

/** --lock-timeout, for commands that write. */
export const lockFlags = {
  'lock-timeout': Flags.string({summary: 'Seconds to wait for the scenario lock before exit 7.', default: '30', helpValue: 'SECONDS'}),
};

export function parseLockTimeout(value: string | undefined): number {
  const n = Number(value ?? '30');
  if (value !== undefined && (value.trim() === '' || !Number.isFinite(n) || n < 0)) {
    throw new AutoctxError('USAGE', `--lock-timeout must be a non-negative number of seconds, got "${value}"`);
  }
  return n;
}

/** Map anything thrown to a typed error: ours as is, oclif's parse errors as USAGE, the rest INTERNAL. */
export function toAutoctxError(error: unknown): AutoctxError {
  if (isAutoctxError(error)) return error;
  const e = error as {message?: string; oclif?: {exit?: number}; code?: string; parse?: unknown};
  // oclif's parser errors (unknown flag, missing argument, failed validation) carry `parse`.
  if (e?.oclif?.exit === 2 || e?.parse !== undefined) {
    return new AutoctxError('USAGE', firstLine(e.message ?? 'invalid invocation'));
  }
  return new AutoctxError('INTERNAL', `unexpected error (this is a bug): ${firstLine(e?.message ?? String(error))}`);
}

function firstLine(text: string): string {
  return text.split('\n').map((l) => l.trim()).filter(Boolean).join(' ').replace(/\s+See more help with --help$/, '');
}

/**
 * The base of every command: one compact JSON object on stdout with --json,
 * errors as {"status":"error","error":{code,message,exit_code}} and the exit
 * code from the table in src/errors.ts.
 */
export abstract class AutoctxCommand extends Command {
  static override enableJsonFlag = true;

  override async init(): Promise<void> {
    await super.init();
    if (!this.jsonEnabled()) await enableColour(process.stdout);
  }

  override logJson(json: unknown): void {
    let text: string;
    try {
      text = canonicalJson(json);
    } catch {
      text = JSON.stringify(json);
    }
    process.stdout.write(`${text}\n`);
  }

  override async catch(error: Error & {exitCode?: number}): Promise<void> {
    const e = toAutoctxError(error);
    process.exitCode = e.exitCode;
    if (process.env.AUTOCTX_DEBUG && !isAutoctxError(error)) process.stderr.write(`${error.stack ?? error}\n`);
    if (this.jsonEnabled()) {
      this.logJson({status: 'error', error: {code: e.code, message: e.message, exit_code: e.exitCode}});
    } else {
      process.stderr.write(`${paint.red('error')} ${paint.bold(e.code)}: ${e.message}\n`);
    }
  }

  /** Print the human summary (never in --json mode) and return the result for --json. */
  protected done<T extends object>(result: T, lines: () => string[], exitCode = 0): T {
    if (exitCode !== 0) process.exitCode = exitCode;
    if (!this.jsonEnabled()) process.stdout.write(`${lines().join('\n')}\n`);
    return result;
  }
}
