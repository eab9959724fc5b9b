import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {spawnSync} from 'node:child_process';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {isAutoctxError, isJsonParseError, isSystemError, rethrowUnless, AutoctxError} from '../../src/errors.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

/**
 * The project's own lint rules (biome.json and scripts/lint/*.grit): a catch never swallows a
 * programming error, and `as never` does not hide a type in src/. Each probe is linted with the
 * project's configuration, copied into a scratch folder so that nothing is written into the tree.
 */
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-lint-'));
fs.copyFileSync(path.join(PROJECT_ROOT, 'biome.json'), path.join(scratch, 'biome.json'));
fs.mkdirSync(path.join(scratch, 'scripts/lint'), {recursive: true});
for (const f of fs.readdirSync(path.join(PROJECT_ROOT, 'scripts/lint')))
  fs.copyFileSync(path.join(PROJECT_ROOT, 'scripts/lint', f), path.join(scratch, 'scripts/lint', f));
afterAll(() => fs.rmSync(scratch, {recursive: true, force: true}));

const fn = (body: string): string => `export function f(read: () => number): number {\n${body}\n}\n`;
const bare = fn('  try {\n    return read();\n  } catch {\n    return 0;\n  }');

/** Each probe: where it is saved (the rules depend on the folder) and its text. */
const PROBES = {
  bare: ['src/bare.ts', bare],
  bareFinally: [
    'src/bare-finally.ts',
    fn('  try {\n    return read();\n  } catch {\n    return 0;\n  } finally {\n    read();\n  }'),
  ],
  silent: [
    'src/silent.ts',
    fn('  try {\n    return read();\n  } catch (error) {\n    return String(error).length;\n  }'),
  ],
  rethrows: [
    'src/rethrows.ts',
    fn(
      '  try {\n    return read();\n  } catch (error) {\n    rethrowUnless(error, isSystemError);\n    return 0;\n  }',
    ),
  ],
  throws: [
    'src/throws.ts',
    fn(
      '  try {\n    return read();\n  } catch (error) {\n    if (!(error ' +
        'instanceof RangeError)) throw error;\n    return 0;\n  }',
    ),
  ],
  deliberate: [
    'src/deliberate.ts',
    fn(
      '  // biome-ignore lint/plugin: the output of last resort\n  ' +
        'try {\n    return read();\n  } catch {\n    return 0;\n  }',
    ),
  ],
  inBin: ['bin/bare.js', bare.replace(': number', '').replace('read: () => number', 'read')],
  inScripts: ['scripts/bare.ts', bare],
  inTest: ['test/bare.ts', bare],
  neverInSrc: ['src/never.ts', 'export const x = JSON.parse("1") as never;\n'],
  neverInTest: ['test/never.ts', 'export const x = JSON.parse("1") as never;\n'],
} as const;

/** The linter's messages for each probe, from one run of it over all of them. */
const found: Record<string, string[]> = {};
beforeAll(() => {
  for (const [rel, text] of Object.values(PROBES)) {
    fs.mkdirSync(path.join(scratch, path.dirname(rel)), {recursive: true});
    fs.writeFileSync(path.join(scratch, rel), text);
  }
  const biome = path.join(PROJECT_ROOT, 'node_modules/.bin/biome');
  const r = spawnSync(biome, ['lint', '--vcs-enabled=false', '--reporter=json', '--max-diagnostics=100', '.'], {
    cwd: scratch,
    encoding: 'utf8',
  });
  const report = JSON.parse(r.stdout) as {diagnostics: Array<{message: string; location: {path: string}}>};
  for (const d of report.diagnostics) (found[d.location.path] ??= []).push(d.message);
});
const lint = (probe: keyof typeof PROBES): string[] => found[PROBES[probe][0]] ?? [];

describe('the catch rule', () => {
  it('refuses a bare catch, with or without finally', () => {
    expect(lint('bare')).toEqual([expect.stringContaining('a bare catch swallows programming errors')]);
    expect(lint('bareFinally')).toEqual([expect.stringContaining('a bare catch')]);
  });

  it('refuses a catch that binds the error but rethrows nothing', () => {
    expect(lint('silent')).toEqual([expect.stringContaining('rethrows nothing')]);
  });

  it('accepts a catch that rethrows what it did not expect, or throws', () => {
    expect([lint('rethrows'), lint('throws')]).toEqual([[], []]);
  });

  it('accepts a deliberate catch-all that says why', () => {
    expect(lint('deliberate')).toEqual([]);
  });

  it('holds for bin/ and scripts/ too; tests catch errors to look at them and are not held to it', () => {
    expect([lint('inBin').length, lint('inScripts').length, lint('inTest')]).toEqual([1, 1, []]);
  });
});

describe('as never', () => {
  it('is refused in src/ and left to tests, which feed deliberately wrong input', () => {
    expect(lint('neverInSrc')).toEqual([expect.stringContaining('`as never`')]);
    expect(lint('neverInTest')).toEqual([]);
  });
});

describe('rethrowUnless', () => {
  const systemError = (): unknown => {
    try {
      fs.lstatSync(path.join(scratch, 'no-such-file'));
    } catch (error) {
      return error;
    }
    throw new Error('lstat of a missing file did not fail');
  };
  const parseError = (): unknown => {
    try {
      JSON.parse('{');
    } catch (error) {
      return error;
    }
    throw new Error('JSON.parse of "{" did not fail');
  };

  it('rethrows a programming error, whatever else is expected', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'x')");
    expect(() => rethrowUnless(bug, isAutoctxError, isSystemError, isJsonParseError)).toThrow(bug);
  });

  it('lets through exactly the errors named', () => {
    const typed = new AutoctxError('INVALID_INPUT', 'bad');
    expect(() => rethrowUnless(typed, isAutoctxError)).not.toThrow();
    expect(() => rethrowUnless(typed, isSystemError)).toThrow(typed);
    expect(() => rethrowUnless(systemError(), isSystemError)).not.toThrow();
    expect(() => rethrowUnless(systemError(), isJsonParseError)).toThrow();
    expect(() => rethrowUnless(parseError(), isJsonParseError)).not.toThrow();
    expect(() => rethrowUnless(parseError(), isAutoctxError, isSystemError)).toThrow(SyntaxError);
  });
});
