import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import type * as Interfaces from '@oclif/core/interfaces';
import {DEFAULT_LOCK_TIMEOUT_SECONDS} from '../core/common/defaults.js';
import {fail} from '../errors.js';
import {inputProblem} from '../store/io/inputs.js';

/**
 * Typed flags: each one parses and checks its value while oclif reads the
 * command line, so a bad value is a usage error (exit 2) before the core is
 * called, and nothing is read, locked or written.
 */

function seconds(name: string, value: string, allowZero: boolean): number {
  const n = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0) || n > 86_400 * 365) {
    fail(
      'USAGE',
      `--${name} must be a ${allowZero ? 'non-negative' : 'positive'} number of seconds, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

/** A number of seconds: positive, or with `allowZero` non-negative. */
type SecondsOptions = {summary: string; allowZero?: boolean};
export function secondsFlag(name: string, options: SecondsOptions & {default: number}): Interfaces.OptionFlag<number>;
export function secondsFlag(name: string, options: SecondsOptions): Interfaces.OptionFlag<number | undefined>;
export function secondsFlag(
  name: string,
  options: SecondsOptions & {default?: number},
): Interfaces.OptionFlag<number | undefined> {
  const flag = Flags.custom<number>({parse: async (input: string) => seconds(name, input, options.allowZero === true)});
  return flag({
    summary: options.summary,
    helpValue: 'SECONDS',
    ...(options.default !== undefined ? {default: options.default} : {}),
  }) as Interfaces.OptionFlag<number | undefined>;
}

const DIGEST_PREFIX = /^[0-9a-f]{8,64}$/;
const FULL_DIGEST = /^[0-9a-f]{64}$/;

/** A digest as given, in either case: hex digits are case-free, so it is read in lower case, as digests are stored. */
function digest(name: string, given: string, full: boolean): string {
  const value = given.toLowerCase();
  if (!(full ? FULL_DIGEST : DIGEST_PREFIX).test(value)) {
    fail(
      'INVALID_DIGEST',
      `${name} must be ${full ? 'a full 64-character' : 'a bundle digest or a unique prefix of at least 8'}` +
        ` hex ${full ? 'digest' : 'characters'}, got ${JSON.stringify(given)}`,
    );
  }
  return value;
}

/** A bundle digest or a unique prefix of at least 8 hex characters, either case (`full`: the whole digest). */
export const digestFlag = (
  name: string,
  options: {summary: string; full?: boolean},
): Interfaces.OptionFlag<string | undefined> =>
  Flags.custom<string>({parse: async (input: string) => digest(`--${name}`, input, options.full === true)})({
    summary: options.summary,
    helpValue: 'DIGEST',
  });

/** A digest argument (prefix allowed). */
export const digestArg = (name: string, description: string) =>
  Args.custom<string>({parse: async (input: string) => digest(name, input, false)})({description, required: true});

/** An input path that must exist (a file or a folder), or "-" for stdin when `stdin`. */
function source(name: string, value: string, stdin: boolean): string {
  if (value === '-' && stdin) return value;
  if (value.trim() === '') fail('USAGE', `--${name} must name a file${stdin ? ', a folder or - for stdin' : ''}`);
  // A bundle source (the flags that take stdin) is never read through a link.
  const problem = inputProblem(value, !stdin);
  if (problem !== null)
    fail(
      /^E[A-Z]+$/.test(problem) ? 'INPUT_NOT_FOUND' : 'INPUT_UNSAFE',
      `cannot read ${value} (--${name}): ${problem}`,
      {file: value},
    );
  return value;
}

export function sourceFlag(
  name: string,
  options: {summary: string; required: true; stdin?: boolean},
): Interfaces.OptionFlag<string>;
export function sourceFlag(
  name: string,
  options: {summary: string; required?: false; stdin?: boolean},
): Interfaces.OptionFlag<string | undefined>;
export function sourceFlag(
  name: string,
  options: {summary: string; required?: boolean; stdin?: boolean},
): Interfaces.OptionFlag<string | undefined> {
  const flag = Flags.custom<string>({parse: async (input: string) => source(name, input, options.stdin === true)});
  return flag({
    summary: options.summary,
    helpValue: options.stdin ? 'SRC' : 'FILE',
    required: options.required === true,
  }) as Interfaces.OptionFlag<string | undefined>;
}

/** A string that must not be blank (labels, rationales, epochs). */
type TextOptions = {summary: string; helpValue?: string; char?: 's'};
export function textFlag(name: string, options: TextOptions & {required: true}): Interfaces.OptionFlag<string>;
export function textFlag(
  name: string,
  options: TextOptions & {required?: false},
): Interfaces.OptionFlag<string | undefined>;
export function textFlag(
  name: string,
  options: TextOptions & {required?: boolean},
): Interfaces.OptionFlag<string | undefined> {
  const flag = Flags.custom<string>({
    parse: async (input: string) => {
      if (input.trim() === '') fail('USAGE', `--${name} must not be blank`);
      return input;
    },
  });
  return flag({
    summary: options.summary,
    helpValue: options.helpValue ?? 'TEXT',
    ...(options.char ? {char: options.char} : {}),
    required: options.required === true,
  }) as Interfaces.OptionFlag<string | undefined>;
}

/** --lock-timeout, shared by every writing command. */
export const lockTimeoutFlag = secondsFlag('lock-timeout', {
  summary: 'Seconds to wait for the scenario lock before exit 7.',
  allowZero: true,
  default: DEFAULT_LOCK_TIMEOUT_SECONDS,
});

/** A whole number within [min, max]. */
function integer(name: string, value: string, min: number, max: number): number {
  const n = /^-?\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    fail('USAGE', `--${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

type IntegerOptions = {summary: string; min: number; max: number; helpValue?: string};
export function integerFlag(name: string, options: IntegerOptions & {default: number}): Interfaces.OptionFlag<number>;
export function integerFlag(name: string, options: IntegerOptions): Interfaces.OptionFlag<number | undefined>;
export function integerFlag(
  name: string,
  options: IntegerOptions & {default?: number},
): Interfaces.OptionFlag<number | undefined> {
  const flag = Flags.custom<number>({parse: async (input: string) => integer(name, input, options.min, options.max)});
  return flag({
    summary: options.summary,
    helpValue: options.helpValue ?? 'N',
    ...(options.default !== undefined ? {default: options.default} : {}),
  }) as Interfaces.OptionFlag<number | undefined>;
}
