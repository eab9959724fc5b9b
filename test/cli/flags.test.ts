import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {digestArg, digestFlag, secondsFlag, sourceFlag, textFlag} from '../../src/cli/flags.js';
import {AUDIT, evalArgs, FIXTURES_12, makeTree, POLICY_SMALL, type Tree} from '../helpers/pipeline.js';
import {runCli, runCliProcess} from '../helpers/cli.js';
import {treeHash} from '../helpers/tree.js';

/** What a typed flag's own parser makes of one value: the value, or the stable code it refuses with. */
async function parsed(
  flag: {parse: (input: string, ctx: never, opts: never) => Promise<unknown>},
  input: string,
): Promise<unknown> {
  try {
    return await flag.parse(input, {} as never, {} as never);
  } catch (error) {
    return (error as {code?: string}).code ?? 'untyped';
  }
}

describe('typed flags check their values while the command line is read', () => {
  it('seconds: positive numbers only (non-negative where zero means "do not wait")', async () => {
    const timeout = secondsFlag('timeout', {summary: 't'});
    const lock = secondsFlag('lock-timeout', {summary: 'l', allowZero: true, default: 30});
    for (const bad of ['abc', '', ' ', '-1', 'NaN', 'Infinity', '-Infinity', '1e999', '0x', '10s']) {
      expect([bad, await parsed(timeout as never, bad)]).toEqual([bad, 'USAGE']);
      expect([bad, await parsed(lock as never, bad)]).toEqual([bad, 'USAGE']);
    }
    expect(await parsed(timeout as never, '0')).toBe('USAGE');
    expect(await parsed(lock as never, '0')).toBe(0);
    expect(await parsed(timeout as never, '2.5')).toBe(2.5);
    expect(await parsed(lock as never, '30')).toBe(30);
  });

  it(
    'digest: a bundle digest or a unique prefix of at least 8 ' +
      'hex characters (a full one where asked), read in lower case',
    async () => {
      const prefix = digestFlag('expect-active', {summary: 'd'});
      const full = digestFlag('parent', {summary: 'p', full: true});
      const arg = digestArg('the candidate', 'c');
      for (const bad of ['xyz', '1234567', 'ABCDEFG1', 'g0000000', '', ' 12345678', `${'a'.repeat(64)}0`]) {
        expect([bad, await parsed(prefix as never, bad)]).toEqual([bad, 'INVALID_DIGEST']);
        expect([bad, await parsed(arg as never, bad)]).toEqual([bad, 'INVALID_DIGEST']);
      }
      expect(await parsed(prefix as never, 'abcdef01')).toBe('abcdef01');
      expect(await parsed(prefix as never, 'ABCDEF01')).toBe('abcdef01');
      expect(await parsed(arg as never, 'AbCdEf01')).toBe('abcdef01');
      expect(await parsed(full as never, 'A'.repeat(64))).toBe('a'.repeat(64));
      expect(await parsed(full as never, 'abcdef01')).toBe('INVALID_DIGEST');
      expect(await parsed(full as never, 'a'.repeat(64))).toBe('a'.repeat(64));
    },
  );

  it('source: an existing file or folder, or - where stdin is allowed; text: not blank', async () => {
    const from = sourceFlag('from', {summary: 'f', required: true, stdin: true});
    const fixtures = sourceFlag('fixtures', {summary: 'f', required: true});
    expect(await parsed(from as never, '-')).toBe('-');
    expect(await parsed(fixtures as never, '-')).toBe('INPUT_NOT_FOUND');
    expect(await parsed(from as never, '/no/such/file')).toBe('INPUT_NOT_FOUND');
    expect(await parsed(from as never, '')).toBe('USAGE');
    expect(await parsed(fixtures as never, FIXTURES_12)).toBe(FIXTURES_12);
    const rationale = textFlag('rationale', {summary: 'r', required: true});
    expect(await parsed(rationale as never, '  ')).toBe('USAGE');
    expect(await parsed(rationale as never, 'why')).toBe('why');
  });
});

let t: Tree;
let candidate: string;
let results: string;

beforeAll(() => {
  t = makeTree();
  candidate = t.propose('cand', {'playbook/playbook.md': 'Be helpful and precise.\n'});
  results = path.join(t.dir, 'results.jsonl');
  fs.writeFileSync(results, '');
});
afterAll(() => fs.rmSync(t.dir, {recursive: true, force: true}));

/** Every writing command with each of its numeric and digest flags given a bad value: [command line, code]. */
function writingCases(): Array<[string, string[], string]> {
  const src = path.join(t.dir, 'cand');
  const out = path.join(t.dir, 'units.jsonl');
  const audit = ['--audit', `node ${AUDIT}`];
  const commands: Array<[string, string[], Array<[string, string]>, boolean]> = [
    // [name, arguments without the flag under test, [flag, bad value] pairs, whether the candidate argument is checked
    // too]
    ['init', ['init', '--scenario', 'fresh', '--from', src], [['--lock-timeout', 'soon']], false],
    [
      'propose',
      ['propose', '--from', src, '--run-id', 'other'],
      [
        ['--lock-timeout', '-1'],
        ['--generation', 'abc'],
        ['--generation', '-1'],
        ['--generation', '1.5'],
      ],
      false,
    ],
    [
      'screen',
      ['screen', candidate, ...evalArgs(audit)],
      [
        ['--timeout', 'abc'],
        ['--timeout', '0'],
        ['--seeds-per-fixture', '0'],
        ['--concurrency', 'many'],
        ['--lock-timeout', 'NaN'],
      ],
      true,
    ],
    [
      'confirm',
      ['confirm', candidate, ...evalArgs(audit)],
      [
        ['--timeout', 'abc'],
        ['--timeout', '-5'],
        ['--seeds-per-fixture', 'x'],
        ['--concurrency', '0'],
        ['--lock-timeout', 'Infinity'],
      ],
      true,
    ],
    [
      'promote',
      ['promote', candidate, ...audit],
      [
        ['--timeout', 'abc'],
        ['--lock-timeout', 'later'],
      ],
      true,
    ],
    ['reject', ['reject', candidate, '--rationale', 'no'], [['--lock-timeout', 'x']], true],
    [
      'rollback',
      ['rollback', '--rationale', 'x'],
      [
        ['--expect-active', 'xyz'],
        ['--expect-active', 'ABCDEFG1'],
        ['--lock-timeout', '-2'],
      ],
      false,
    ],
    ['epoch rollover', ['epoch', 'rollover', '--evaluator-epoch', 'e2'], [['--lock-timeout', '']], false],
    ['repair', ['repair'], [['--lock-timeout', 'abc']], false],
    [
      'plan export',
      ['plan', 'export', candidate, '--engine', 'e', '--fixtures', FIXTURES_12, '--policy', POLICY_SMALL, '--out', out],
      [
        ['--seeds-per-fixture', '-3'],
        ['--lock-timeout', 'x'],
      ],
      true,
    ],
    ['trials ingest', ['trials', 'ingest', candidate, results], [['--lock-timeout', 'x']], true],
  ];
  const cases: Array<[string, string[], string]> = [];
  for (const [name, args, flags, hasCandidate] of commands) {
    for (const [flag, value] of flags)
      cases.push([
        `${name} ${flag} ${JSON.stringify(value)}`,
        [...args, flag, value],
        flag === '--expect-active' ? 'INVALID_DIGEST' : 'USAGE',
      ]);
    if (hasCandidate)
      cases.push([
        `${name} with a candidate that is not a digest`,
        args.map((a) => (a === candidate ? 'not-hex!' : a)),
        'INVALID_DIGEST',
      ]);
  }
  return cases;
}

describe('every flag of every writing command is checked before anything is read, locked or written', () => {
  it('a bad numeric or digest value: exit 2, one line naming the flag, and the tree unchanged', () => {
    const cases = writingCases();
    expect(cases.length).toBeGreaterThanOrEqual(30);
    for (const [name, args, code] of cases) {
      const before = treeHash(t.dir);
      const r = t.cli(args);
      expect([name, r.status, r.json?.error?.code]).toEqual([name, 2, code]);
      expect(r.json.error.message).not.toMatch(/\n/);
      const flag = name.match(/ (--[a-z-]+) /)?.[1];
      expect([name, r.json.error.message]).toEqual([name, expect.stringContaining(flag ?? 'the candidate')]);
      expect([name, treeHash(t.dir)]).toEqual([name, before]);
    }
  });

  it('confirm --timeout abc with an audit binds no evaluator_plan.json (it used to, and failed only after)', () => {
    const r = t.cli(['confirm', candidate, ...evalArgs(['--audit', `node ${AUDIT}`, '--timeout', 'abc'])]);
    expect(r.status).toBe(2);
    expect(r.json.error.message).toBe('--timeout must be a positive number of seconds, got "abc"');
    expect(fs.existsSync(t.file(`candidates/${candidate}/evaluator_plan.json`))).toBe(false);
  });

  it('plan export --out into a folder that does not exist: exit 2 before the plan is bound', () => {
    const before = treeHash(t.dir);
    const out = path.join(t.dir, 'no-such-folder', 'units.jsonl');
    const r = t.cli([
      'plan',
      'export',
      candidate,
      '--engine',
      'e',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--out',
      out,
    ]);
    expect([r.status, r.json.error.code, r.json.error.data]).toEqual([2, 'INPUT_NOT_FOUND', {file: out}]);
    expect(treeHash(t.dir)).toBe(before);
  });

  it('the error envelope carries the error data: the file a missing input names', () => {
    const r = runCli(['propose', '--from', path.join(t.dir, 'nope'), '--knowledge', t.knowledge, '--json']);
    expect(r.json).toEqual({
      status: 'error',
      error: {
        code: 'INPUT_NOT_FOUND',
        exit_code: 2,
        message: expect.stringContaining('nope'),
        data: {file: path.join(t.dir, 'nope')},
      },
    });
  });
});

describe('an unknown command is a usage error', () => {
  it.each([
    [['statsu'], '"statsu" is not an autoctx command; did you mean "status"? (see autoctx --help)', 'status'],
    [
      ['stauts', '--scenario', 'demo'],
      '"stauts" is not an autoctx command; did you mean "status"? (see autoctx --help)',
      'status',
    ],
    [
      ['promot', 'abcdef01'],
      '"promot" is not an autoctx command; did you mean "promote"? (see autoctx --help)',
      'promote',
    ],
    [
      ['bundle', 'shwo', 'abcdef01'],
      '"bundle shwo" is not an autoctx command; did you mean "bundle show"? (see autoctx --help)',
      'bundle show',
    ],
    [['frobnicate'], '"frobnicate" is not an autoctx command (see autoctx --help)', undefined],
  ])(
    '%j: exit 2, the JSON envelope under --json, one line on stderr ' +
      'without it, and nothing run (the suggestion is never run)',
    (args, message, suggestion) => {
      const before = treeHash(t.dir);
      const json = runCliProcess([...args, '--json', '--knowledge', t.knowledge]);
      expect(json.status).toBe(2);
      const command = args.slice(0, args[0] === 'bundle' ? 2 : 1).join(' ');
      expect(json.json).toEqual({
        status: 'error',
        error: {code: 'UNKNOWN_COMMAND', exit_code: 2, message, data: {command, ...(suggestion ? {suggestion} : {})}},
      });
      expect(json.stdout.trim().split('\n')).toHaveLength(1);
      const plain = runCliProcess(args, {input: 'y\n'}); // an answer on stdin is never read: nothing prompts
      expect(plain.status).toBe(2);
      expect(plain.stdout).toBe('');
      expect(plain.stderr).toBe(`error UNKNOWN_COMMAND: ${message}\n`);
      expect(treeHash(t.dir)).toBe(before);
    },
  );
});

describe('help', () => {
  const helpOf = (args: string[]) => runCliProcess(args);
  it('-h, --help and help <command> print the same help, exit 0', () => {
    const long = helpOf(['confirm', '--help']);
    expect(long.status).toBe(0);
    expect(long.stdout).toContain('USAGE');
    expect(long.stdout).toContain('--rebind');
    for (const args of [
      ['confirm', '-h'],
      ['help', 'confirm'],
    ]) {
      const r = helpOf(args);
      expect([args, r.status, r.stdout]).toEqual([args, 0, long.stdout]);
    }
    expect(helpOf(['help', 'bundle', 'show']).stdout).toBe(helpOf(['bundle', 'show', '--help']).stdout);
    const root = helpOf(['-h']);
    expect([root.status, root.stdout]).toEqual([0, helpOf(['--help']).stdout]);
    expect(helpOf(['help']).stdout).toBe(root.stdout);
    expect(root.stdout).toContain('EXIT CODES');
  });

  it('-h as the value of a flag is that value, not a request for help', () => {
    const r = runCliProcess(['reject', 'abcdef01', '--rationale', '-h', '--knowledge', t.knowledge, '--json']);
    expect(r.stdout).not.toContain('USAGE');
    expect(r.json.status).toBe('error'); // (no such candidate: the command ran)
  });

  it('shell completion comes from @oclif/plugin-autocomplete', () => {
    const r = runCliProcess(['autocomplete', 'script', 'bash'], {
      env: {XDG_CACHE_HOME: path.join(t.dir, 'cache'), HOME: t.dir},
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('autoctx');
  });
});
