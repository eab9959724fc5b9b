import {distance} from 'fastest-levenshtein';
import {AutoctxError} from '../errors.js';

// The command line's mistakes in autoctx's own words: an unknown flag (with the nearest one), a missing required flag,
// an unexpected argument. oclif's parser finds them; these say them in one line naming the command and the fix.

/** The closest of `known` to what was typed, when it is close enough to be a slip (an edit for every three letters). */
export function nearest(typed: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of known) {
    const d = distance(typed, c);
    if (d < bestDistance || (d === bestDistance && best !== null && c < best)) [best, bestDistance] = [c, d];
  }
  return best !== null && bestDistance <= Math.max(1, Math.floor(typed.length / 3)) ? best : null;
}

/** A flag as oclif defines it, as far as reading the command line needs. */
interface FlagShape {
  type: 'boolean' | 'option';
  char?: string;
  aliases?: string[];
  charAliases?: string[];
  allowNo?: boolean;
  required?: boolean;
  helpValue?: string | string[];
  options?: readonly string[];
  summary?: string;
}
type Flags = Record<string, FlagShape>;

/** The flag a token names, as oclif's parser finds it (undefined: none). */
function flagOf(token: string, flags: Flags): string | undefined {
  if (token.startsWith('--')) {
    const name = token.slice(2).split('=')[0]!;
    if (flags[name]) return name;
    const alias = Object.entries(flags).find(([, f]) => f.aliases?.includes(name));
    if (alias) return alias[0];
    const negated = name.startsWith('no-') ? flags[name.slice(3)] : undefined;
    return negated?.type === 'boolean' && negated.allowNo ? name.slice(3) : undefined;
  }
  const char = token[1];
  return Object.entries(flags).find(([, f]) => f.char === char || f.charAliases?.includes(char!))?.[0];
}

/**
 * The first flag on the command line the command does not have, read as oclif's parser reads it (a value flag takes
 * the next word unless that word names a flag; `--` ends the flags; `-1` is a negative number, not a flag). Found
 * before anything is parsed, so that `promote --knowlege knowledge 073162ea` names the flag, not the word after it.
 */
export function unknownFlag(argv: readonly string[], flags: Flags): string | null {
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') return null;
    if (!token.startsWith('-') || token === '-' || /^-\d/.test(token)) continue;
    const name = flagOf(token, flags);
    if (name === undefined) return token.split('=')[0]!;
    const inline = token.startsWith('--') ? token.includes('=') : token.length > 2;
    if (flags[name]!.type === 'option' && !inline && i + 1 < argv.length && flagOf(argv[i + 1]!, flags) === undefined)
      i++;
  }
  return null;
}

const spoken = (id: string | undefined) => (id ?? '').split(':').join(' ');

/** An unknown flag, with the nearest one the command has. */
export function unknownFlagError(commandId: string | undefined, token: string, flags: Flags): AutoctxError {
  const command = spoken(commandId);
  const names = Object.keys(flags).map((n) => `--${n}`);
  const suggestion = token.startsWith('--') ? nearest(token, names) : null;
  return new AutoctxError(
    'USAGE',
    `${command} has no flag ${token}${suggestion ? `; did you mean ${suggestion}?` : ''} ` +
      `(see autoctx ${command} --help)`,
    {flag: token, ...(suggestion ? {suggestion} : {})},
  );
}

function flagWithValue(name: string, f: FlagShape | undefined): string {
  if (f?.type === 'boolean') return `--${name}`;
  const value = f?.options ? f.options.join('|') : Array.isArray(f?.helpValue) ? f.helpValue[0] : f?.helpValue;
  return `--${name} ${value ?? 'VALUE'}`;
}

/**
 * oclif's parse errors in one line naming the command: a missing required flag (`rollback needs --rationale TEXT:
 * why …`), flags that exclude each other, a missing or an unexpected argument, a value outside a flag's choices.
 * Null: not one of these (the caller keeps oclif's first line).
 */
export function parseErrorLine(
  commandId: string | undefined,
  error: {message?: string; name?: string; args?: unknown; flags?: unknown; parse?: unknown},
  flags: Flags,
): string | null {
  const command = spoken(commandId);
  const help = `(see autoctx ${command} --help)`;
  const message = error.message ?? '';
  const lines = message
    .split('\n')
    .map((l) => l.replace(/\u001b\[[0-9;]*m/g, '').trim())
    .filter(Boolean);
  const missing = lines.flatMap((l) => /^Missing required flag ([\w-]+)$/.exec(l)?.[1] ?? []);
  if (missing.length === 1) {
    const f = flags[missing[0]!];
    const what = f?.summary ? `: ${f.summary.replace(/\.$/, '')}` : '';
    return `${command} needs ${flagWithValue(missing[0]!, f)}${what} ${help}`;
  }
  if (missing.length > 1)
    return `${command} needs ${missing.map((n) => flagWithValue(n, flags[n])).join(' and ')} ${help}`;
  if (/^The following errors? occurred:/.test(lines[0] ?? ''))
    return `${command}: ${lines.slice(1).join('; ')} ${help}`;
  const unexpected = /^Unexpected arguments?: (.*)$/.exec(lines[0] ?? '');
  if (unexpected) return unexpectedArgumentsLine(command, unexpected[1]!.split(', '));
  const args = /^Missing \d+ required args?:?$/.test(lines[0] ?? '') ? lines.slice(1) : null;
  if (args) {
    const named = args
      .filter((l) => !/^(Note|Alternatively|See more help)/.test(l))
      .map((l) => /^(\S+)\s*(.*)$/.exec(l)!)
      .map(([, name, what]) => `${name!.toUpperCase()}${what ? ` (${what.replace(/\.$/, '')})` : ''}`);
    return `${command} needs ${named.join(' and ')} ${help}`;
  }
  const option = /^Expected --([\w-]+)=(.*) to be one of: (.*)$/.exec(lines[0] ?? '');
  if (option) return `${command}: --${option[1]} must be one of ${option[3]}, got ${JSON.stringify(option[2])} ${help}`;
  const value = /^Flag (--[\w-]+) expects (a value|one of these values: (.*))$/.exec(lines[0] ?? '');
  if (value) return `${command}: ${value[1]} needs ${value[3] ? `one of ${value[3]}` : 'a value'} ${help}`;
  const twice = /^Flag (--[\w-]+) can only be specified once$/.exec(lines[0] ?? '');
  if (twice) return `${command}: ${twice[1]} is given more than once; give it once ${help}`;
  return null;
}

/** Words after a command that takes none (or more than it takes). */
export function unexpectedArgumentsLine(command: string, extra: readonly string[]): string {
  const words = extra.map((w) => JSON.stringify(w)).join(', ');
  return (
    `unexpected argument${extra.length === 1 ? '' : 's'} ${words} for ${command} ` + `(see autoctx ${command} --help)`
  );
}
