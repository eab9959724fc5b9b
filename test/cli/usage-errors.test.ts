import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {runCli, runCliProcess} from '../helpers/cli.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

// The command line's mistakes in autoctx's own one-line form: the flag or word that is wrong, the fix when there is
// a near one, exit 2, one JSON object under --json, and the knowledge tree untouched.

let dir: string;
let knowledge: string;
beforeAll(() => {
  dir = tempDir('autoctx-usage-');
  knowledge = path.join(dir, 'knowledge');
  const src = writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'Be helpful.\n'});
  expect(runCli(['init', '--scenario', 'demo', '--from', src, '--knowledge', knowledge]).status).toBe(0);
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

const cases: Array<[string, string[], string, string]> = [
  [
    'a flag typo gets the nearest flag',
    ['confirm', 'abcdef01', '--evaluater', 'node e.js'],
    'USAGE',
    'confirm has no flag --evaluater; did you mean --evaluator? (see autoctx confirm --help)',
  ],
  [
    '--jsn is --json',
    ['status', '--jsn'],
    'USAGE',
    'status has no flag --jsn; did you mean --json? (see autoctx status --help)',
  ],
  [
    'the unknown flag is the error, not the word after it taken for the argument',
    ['promote', '--knowlege', 'knowledge', '073162ea'],
    'USAGE',
    'promote has no flag --knowlege; did you mean --knowledge? (see autoctx promote --help)',
  ],
  [
    'a topic typo gets the nearest command',
    ['releas', 'list'],
    'UNKNOWN_COMMAND',
    '"releas list" is not an autoctx command; did you mean "release list"? (see autoctx --help)',
  ],
  [
    'a topic typo alone gets the topic',
    ['releas'],
    'UNKNOWN_COMMAND',
    '"releas" is not an autoctx command; did you mean "release"? (see autoctx --help)',
  ],
  [
    'a word after a command that takes none is an unexpected argument of that command',
    ['status', 'extra-arg'],
    'USAGE',
    'unexpected argument "extra-arg" for status (see autoctx status --help)',
  ],
  [
    'and after a command that takes fewer',
    ['promote', 'abcdef01', 'extra'],
    'USAGE',
    'unexpected argument "extra" for promote (see autoctx promote --help)',
  ],
  [
    'a missing required flag names the flag, its value and what it is for',
    ['rollback'],
    'USAGE',
    'rollback needs --rationale TEXT: Why the rollback is needed (recorded; a blank one is refused and recorded) ' +
      '(see autoctx rollback --help)',
  ],
  ['two missing required flags', ['init'], 'USAGE', 'init needs --from SRC and --scenario S (see autoctx init --help)'],
  [
    'a missing argument',
    ['promote'],
    'USAGE',
    'promote needs CANDIDATE (Candidate bundle digest or a unique prefix) (see autoctx promote --help)',
  ],
  [
    'a value outside the choices',
    ['report', '--format', 'xyz'],
    'USAGE',
    'report: --format must be one of md, html, got "xyz" (see autoctx report --help)',
  ],
  [
    'a flag given twice',
    ['rollback', '--rationale', 'a', '--rationale', 'b'],
    'USAGE',
    'rollback: --rationale is given more than once; give it once (see autoctx rollback --help)',
  ],
];

describe("the command line's mistakes, in one line that names the fix", () => {
  it.each(cases)('%s', (_name, args, code, message) => {
    const before = treeHash(dir);
    const plain = runCliProcess([...args, '--knowledge', knowledge]);
    expect([plain.status, plain.stdout, plain.stderr]).toEqual([2, '', `error ${code}: ${message}\n`]);
    const json = runCliProcess([...args, '--knowledge', knowledge, '--json']);
    expect(json.status).toBe(2);
    expect(json.stdout.trim().split('\n')).toHaveLength(1);
    expect(json.json).toEqual({
      status: 'error',
      error: {code, exit_code: 2, message, ...(json.json.error.data ? {data: expect.any(Object)} : {})},
    });
    expect(treeHash(dir)).toBe(before);
  });

  it("no oclif wording is left in any command's missing required flag", () => {
    const r = runCli(['release', 'transition', 'v1', '--to', 'SHADOW', '--knowledge', knowledge, '--json']);
    expect(r.json.error.message).toMatch(/^release transition needs --rationale TEXT: /);
    expect(r.json.error.message).not.toMatch(/following error|Missing required flag/);
  });
});
