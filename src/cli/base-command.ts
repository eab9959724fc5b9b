import {Command} from '@oclif/core/command';
import * as Flags from '@oclif/core/flags';
import {canonicalJson} from '../canonical/index.js';
import {AutoctxError, environmentError, exitCodeForStatus, isAutoctxError} from '../errors.js';
import {lockTimeoutFlag} from './flags.js';
import {enableColour, paint, paintErr} from './style.js';

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
export const lockFlags = {'lock-timeout': lockTimeoutFlag};

/** Map anything thrown to a typed error: ours as is, a refusing environment as exit 9, oclif's parse errors as USAGE, the rest INTERNAL. */
export function toAutoctxError(error: unknown): AutoctxError {
  // A flag's own check raised a typed error; oclif wrapped its message in lines of its own.
  if (isAutoctxError(error)) return error.message.includes('\n') ? new AutoctxError(error.code, firstLine(error.message), error.data) : error;
  const environment = environmentError(error);
  if (environment) return environment;
  const e = error as {message?: string; oclif?: {exit?: number}; code?: string; parse?: unknown};
  // oclif's parser errors (unknown flag, missing argument, failed validation) carry `parse`.
  if (e?.oclif?.exit === 2 || e?.parse !== undefined) {
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
  return {status: 'error', error: {code: e.code, message: e.message, exit_code: e.exitCode, ...(e.data ? {data: e.data} : {})}};
}

/** Under a failed evaluator's error line: the last lines it wrote on stderr, indented. */
function stderrBlock(e: AutoctxError): string {
  const tail = e.data?.stderr_tail;
  if (!Array.isArray(tail) || tail.length === 0) return '';
  return `  ${paintErr.dim(`the evaluator's stderr, last ${tail.length} line${tail.length === 1 ? '' : 's'}:`)}\n${tail.map((l) => `  | ${String(l)}\n`).join('')}`;
}

/**
 * The base of every command: one compact JSON object on stdout with --json,
 * errors as {"status":"error","error":{code,message,exit_code,data?}} and the
 * exit code of the result's status from the one table in src/errors.ts.
 */
export abstract class AutoctxCommand extends Command {
  static override enableJsonFlag = true;

  override async init(): Promise<void> {
    await super.init();
    // Each stream is coloured by its own terminal: `autoctx … 2>err.log` keeps colour on stdout, `| less` keeps it on stderr.
    if (!this.jsonEnabled()) await enableColour(process.stdout);
    await enableColour(process.stderr);
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
    // A flag refused while parsing is reported here, in one line: oclif would add a warning that the command never parsed (outside NODE_ENV=production).
    (this as unknown as {parsed: boolean}).parsed = true;
    const e = toAutoctxError(error);
    process.exitCode = e.exitCode;
    if (process.env.AUTOCTX_DEBUG && !isAutoctxError(error)) process.stderr.write(`${error.stack ?? error}\n`);
    if (this.jsonEnabled()) this.logJson(errorEnvelope(e));
    else process.stderr.write(`${paintErr.red('error')} ${paintErr.bold(e.code)}: ${e.message}\n${stderrBlock(e)}`);
  }

  /** Print the human summary (never in --json mode) and return the result for --json; the exit code follows the status. */
  protected done<T extends {status: string}>(result: T, lines: () => string[]): T {
    const exitCode = exitCodeForStatus(result.status, this.id?.replace(/:/g, ' '));
    if (exitCode !== 0) process.exitCode = exitCode;
    if (!this.jsonEnabled()) process.stdout.write(`${lines().join('\n')}\n`);
    return result;
  }
}

/** A command that acts inside a scenario of a knowledge tree: --knowledge and --scenario. */
export abstract class ScenarioCommand extends AutoctxCommand {
  static override baseFlags = {...storeFlags};
}

/** A command that writes: also --lock-timeout, parsed and checked with the rest of the flags. */
export abstract class WritingCommand extends AutoctxCommand {
  static override baseFlags = {...storeFlags, ...lockFlags};
}
