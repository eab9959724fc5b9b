import path from 'node:path';
import fs from 'node:fs';
import {inputPathProblem, readInputFile, readStdinLimited} from './input-files.js';
import {decodeUtf8, parseJson, withOrigin, type JsonValue} from '../../canonical/index.js';
import {fail, isSystemError, rethrowUnless} from '../../errors.js';
import {fixtureFromJson, type Fixture} from '../../model/evaluation/fixtures.js';

/** Read a file the user passes in (or "-" for stdin) as text. Missing: INPUT_NOT_FOUND (exit 2). */
export function readInputText(file: string): string {
  // A link to an input file is followed (it is the user's own file); a FIFO or device is refused, not read for ever.
  const bytes = file === '-' ? readStdinLimited() : readInputFile(file, true);
  return withOrigin(file, () => decodeUtf8(bytes));
}

/** A JSON file the user passes in, parsed strictly. */
export function readInputJson(file: string): JsonValue {
  const text = readInputText(file);
  return withOrigin(file, () => parseJson(text));
}

/** Each non-blank line of a JSON Lines file, parsed strictly, with its line number. */
export function readJsonLines(file: string): Array<{line: number; value: JsonValue}> {
  const text = readInputText(file);
  const out: Array<{line: number; value: JsonValue}> = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    out.push({line: i + 1, value: withOrigin(`${file}:${i + 1}`, () => parseJson(raw))});
  });
  return out;
}

/** A fixtures file: JSON Lines, one fixture a line. */
export function readFixtures(file: string): Fixture[] {
  const fixtures = readJsonLines(file).map(({line, value}) => fixtureFromJson(value, `${file}:${line}`));
  if (fixtures.length === 0) fail('INVALID_INPUT', `${file} holds no fixtures`);
  return fixtures;
}

/** Why an input path cannot be used, or null (input-files.ts). Links are followed except for bundle sources. */
export function inputProblem(file: string, follow = true): string | null {
  return inputPathProblem(file, follow);
}

/**
 * Whether `file` is inside the folder `root`, both with every link resolved
 * (a file that does not exist yet: its nearest existing ancestor resolved).
 * A root that does not exist holds nothing.
 */
export function isInsideFolder(file: string, root: string): boolean {
  const real = (p: string): string | null => {
    try {
      return fs.realpathSync(p);
    } catch (error) {
      rethrowUnless(error, isSystemError);
      const parent = path.dirname(p);
      if (parent === p) return null;
      const up = real(parent);
      return up === null ? null : path.join(up, path.basename(p));
    }
  };
  let top: string;
  try {
    top = fs.realpathSync(root);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return false;
  }
  const at = real(path.resolve(file));
  if (at === null) return false;
  const rel = path.relative(top, at);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
