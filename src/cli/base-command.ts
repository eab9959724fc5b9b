import {Command} from '@oclif/core/command';
import * as Flags from '@oclif/core/flags';
import type {Input, ParserOutput} from '@oclif/core/interfaces';
import {canonicalJson} from '../canonical/index.js';
import {AutoctxError, exitCodeForStatus, isAutoctxError} from '../errors.js';
import {errorEnvelope, toAutoctxError} from './error-output.js';

export {errorEnvelope, toAutoctxError} from './error-output.js';
import {lockTimeoutFlag} from './flags.js';
import {signingKeyFlag} from './release-flags.js';
import {enableColour, paint, paintErr} from './style.js';
import {parseErrorLine, unknownFlag, unknownFlagError} from './usage-errors.js';

// oclif's parser output shapes (not exported by name).
type FlagOutput = {[name: string]: any};
type ArgOutput = {[name: string]: any};

/** --knowledge and --scenario, shared by every command that reads a knowledge tree. */
export const storeFlags = {
  knowledge: Flags.string({
    char: 'k',
    summary: 'Knowledge root (default: $AUTOCTX_KNOWLEDGE, else ./knowledge, looked for from here up as git does).',
    helpValue: 'DIR',
  }),
  scenario: Flags.string({
    char: 's',
    summary: 'Scenario; may be left out when the root holds exactly one.',
    helpValue: 'S',
  }),
};

/** --lock-timeout, for commands that write. */
export const lockFlags = {'lock-timeout': lockTimeoutFlag};

/** Under a failed evaluator's error line: the last lines it wrote on stderr, indented. */
function stderrBlock(e: AutoctxError): string {
  const tail = e.data?.stderr_tail;
  if (!Array.isArray(tail) || tail.length === 0) return '';
  return (
    `  ` +
    `${paintErr.dim(`the evaluator's stderr, last ${tail.length} line${tail.length === 1 ? '' : 's'}:`)}` +
    `\n${tail.map((l) => `  | ${String(l)}\n`).join('')}`
  );
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
    // Each stream is coloured by its own terminal: `autoctx … 2>err.log` keeps colour on stdout, `| less` keeps it on
    // stderr.
    if (!this.jsonEnabled()) await enableColour(process.stdout);
    await enableColour(process.stderr);
  }

  override logJson(json: unknown): void {
    let text: string;
    // biome-ignore lint/plugin: the output of last resort: what canonical JSON refuses still prints as plain JSON
    try {
      text = canonicalJson(json);
    } catch {
      text = JSON.stringify(json);
    }
    process.stdout.write(`${text}\n`);
  }

  /** Every flag the command takes (its own, the base class's, --json), as oclif aggregates them. */
  private allFlags(options: {flags?: object; baseFlags?: object; enableJsonFlag?: boolean} = this.ctor) {
    return {
      ...(options.baseFlags ?? {}),
      ...(options.flags ?? {}),
      ...(options.enableJsonFlag ? {json: {type: 'boolean' as const}} : {}),
    } as Parameters<typeof unknownFlag>[1];
  }

  /**
   * An unknown flag is named, with the nearest one, whatever else oclif found wrong after it: an argument it refused
   * (the word after `--knowlege` is no digest), a missing argument or an unexpected one. A flag's own refusal (no
   * value, a bad value, given twice) stays as it is.
   */
  protected override async parse<F extends FlagOutput, B extends FlagOutput, A extends ArgOutput>(
    options?: Input<F, B, A>,
    argv: string[] = this.argv,
  ): Promise<ParserOutput<F, B, A>> {
    try {
      return await super.parse(options, argv);
    } catch (error) {
      const message = String((error as {message?: unknown})?.message ?? '');
      if (/^(Parsing --|Flag --|Expected --)/.test(message)) throw error;
      const flags = this.allFlags(options ?? this.ctor);
      const unknown = unknownFlag(argv, flags);
      throw unknown === null ? error : unknownFlagError(this.id, unknown, flags);
    }
  }

  override async catch(error: Error & {exitCode?: number}): Promise<void> {
    // A flag refused while parsing is reported here, in one line: oclif would add a warning that the command never
    // parsed (outside NODE_ENV=production).
    const self = this as unknown as {parsed: boolean};
    const whileParsing = !self.parsed;
    self.parsed = true;
    let e = toAutoctxError(error, whileParsing);
    if (e.code === 'USAGE' && !isAutoctxError(error)) {
      const line = parseErrorLine(this.id, error, this.allFlags());
      if (line !== null) e = new AutoctxError('USAGE', line, e.data);
    }
    process.exitCode = e.exitCode;
    if (process.env.AUTOCTX_DEBUG && !isAutoctxError(error)) process.stderr.write(`${error.stack ?? error}\n`);
    if (this.jsonEnabled()) this.logJson(errorEnvelope(e));
    else process.stderr.write(`${paintErr.red('error')} ${paintErr.bold(e.code)}: ${e.message}\n${stderrBlock(e)}`);
  }

  /**
   * Print the human summary (never in --json mode) and return the result for --json; the exit code follows the status.
   */
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

/** A command that changes the state of a scenario and so, in a signed scenario, signs it: also --signing-key. */
export abstract class SigningWritingCommand extends AutoctxCommand {
  static override baseFlags = {...storeFlags, ...lockFlags, 'signing-key': signingKeyFlag};
}
