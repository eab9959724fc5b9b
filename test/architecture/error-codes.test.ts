import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {ERROR_CODES} from '../../src/errors.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

/**
 * Every stable error code is raised somewhere: a code only declared in the table (src/errors.ts)
 * promises users a failure autoctx never reports. A code counts as used where the product's code
 * (src/, and bin/ for what runs before the build) names it as a string, as in
 * `fail('INVALID_INPUT', ...)` or `{code: 'NO_SPACE'}`, outside the table itself. Three codes were
 * declared and never raised, and no document promised them (NO_ROLLBACK_TARGET, FIXTURE_MISMATCH,
 * APPROVER_NOT_ALLOWED): they were removed.
 */
function files(dir: string): string[] {
  return fs
    .readdirSync(dir, {withFileTypes: true})
    .flatMap((e) =>
      e.isDirectory() ? files(path.join(dir, e.name)) : /\.(ts|tsx|js)$/.test(e.name) ? [path.join(dir, e.name)] : [],
    );
}

/** The product's code, with the table's own declarations taken out of src/errors.ts. */
function productText(): string {
  const errors = path.join(PROJECT_ROOT, 'src/errors.ts');
  return [...files(path.join(PROJECT_ROOT, 'src')), ...files(path.join(PROJECT_ROOT, 'bin'))]
    .map((file) => {
      const text = fs.readFileSync(file, 'utf8');
      if (file !== errors) return text;
      const start = text.indexOf('export const ERROR_CODES = {');
      const end = text.indexOf('} as const', start);
      expect([start > 0, end > start]).toEqual([true, true]);
      return text.slice(0, start) + text.slice(end);
    })
    .join('\n');
}

/**
 * A code named as a string, or in the one-line `error CODE: message` that bin/run.js prints before anything is built.
 */
const named = (code: string): RegExp => new RegExp(`['"\`]${code}['"\`]|\\berror ${code}:`);

describe('the error table', () => {
  it('has no code that nothing raises', () => {
    const text = productText();
    const unused = Object.keys(ERROR_CODES).filter((code) => !named(code).test(text));
    expect(unused).toEqual([]);
  });

  it('is read by the check above (a made-up code is reported unused)', () => {
    const text = productText();
    expect([
      named('NO_SUCH_CODE_ANYWHERE').test(text),
      named('INVALID_INPUT').test(text),
      named('NOT_BUILT').test(text),
    ]).toEqual([false, true, true]);
  });
});
