import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {init} from '../../src/core/init.js';
import {propose} from '../../src/core/propose.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCli, runCliProcess} from '../helpers/cli.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

// Two candidates of this baseline whose digests share the prefix cfe230ca (found by search).
const COLLIDING = ['candidate 11653', 'candidate 62399'];
const PREFIX = 'cfe230ca';

let dir: string;
let knowledge: string;
let files: Record<string, string>;

beforeAll(async () => {
  dir = tempDir();
  knowledge = path.join(dir, 'knowledge');
  await init({knowledge, scenario: 'demo', from: writeSource(path.join(dir, 'base'), {'playbook/playbook.md': 'baseline'})});
  for (const [i, content] of COLLIDING.entries()) {
    await propose({knowledge, from: writeSource(path.join(dir, `c${i}`), {'playbook/playbook.md': content}), runId: `r${i}`});
  }
  const manifest = (components: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({scenario: 'demo', evaluator_epoch: 'epoch-1', parent_digest: null, components, ...extra});
  const put = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };
  files = {
    malformed: put('malformed.json', '{"scenario": "demo",'),
    schema: put('schema.json', manifest('nope')),
    forged: put('forged.json', manifest([{kind: 'playbook', key: 'p', content: 'x', media_type: 'text/plain', digest: '0'.repeat(64)}])),
    unsafe: put('unsafe.json', manifest([{kind: 'playbook', key: 'p', content: 'x'}]).replace('"epoch-1"', '"epoch-1","n":9007199254740993')),
    surrogate: put('surrogate.json', manifest([{kind: 'playbook', key: 'p', content: 'x'}]).replace('"content":"x"', '"content":"\\ud800"')),
    unknownKind: writeSource(path.join(dir, 'badkind'), {'persona/p.md': 'x'}),
    badJsonComponent: writeSource(path.join(dir, 'badjson'), {'routing_config/roles.json': '{oops'}),
    missing: path.join(dir, 'does-not-exist.json'),
  };
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

type Case = [string, string[], string, number];

const inputCases = (cmd: string[]): Case[] => [
  [`${cmd.join(' ')}: missing file`, [...cmd, '--from', '{missing}'], 'INPUT_NOT_FOUND', 2],
  [`${cmd.join(' ')}: malformed JSON`, [...cmd, '--from', '{malformed}'], 'INVALID_JSON', 2],
  [`${cmd.join(' ')}: schema violation`, [...cmd, '--from', '{schema}'], 'SCHEMA_VIOLATION', 2],
  [`${cmd.join(' ')}: forged digest`, [...cmd, '--from', '{forged}'], 'DIGEST_MISMATCH', 2],
  [`${cmd.join(' ')}: unsafe integer`, [...cmd, '--from', '{unsafe}'], 'UNSAFE_INTEGER', 2],
  [`${cmd.join(' ')}: lone surrogate`, [...cmd, '--from', '{surrogate}'], 'LONE_SURROGATE', 2],
  [`${cmd.join(' ')}: unknown kind folder`, [...cmd, '--from', '{unknownKind}'], 'UNKNOWN_KIND', 2],
  [`${cmd.join(' ')}: malformed JSON component`, [...cmd, '--from', '{badJsonComponent}'], 'INVALID_JSON', 2],
];

const scenarioCases = (cmd: string[]): Case[] => [
  [`${cmd.join(' ')}: unknown scenario`, [...cmd, '--scenario', 'nope'], 'SCENARIO_NOT_FOUND', 2],
  [`${cmd.join(' ')}: scenario ../x`, [...cmd, '--scenario', '../x'], 'INVALID_NAME', 2],
];

const cases: Case[] = [
  ...inputCases(['init', '--scenario', 'fresh']),
  [`init: scenario ../x`, ['init', '--scenario', '../x', '--from', '{forged}'], 'INVALID_NAME', 2],
  ...inputCases(['propose']),
  ...scenarioCases(['propose', '--from', '{forged}']),
  ...inputCases(['bundle', 'build', '--scenario', 'demo']),
  ...scenarioCases(['bundle', 'show', PREFIX]),
  [`bundle show: ambiguous prefix`, ['bundle', 'show', PREFIX], 'AMBIGUOUS_DIGEST', 2],
  [`bundle show: unknown digest`, ['bundle', 'show', 'abcdef0123'], 'DIGEST_NOT_FOUND', 2],
  [`bundle show: not a digest`, ['bundle', 'show', 'xyz'], 'INVALID_DIGEST', 2],
  ...scenarioCases(['bundle', 'materialize', PREFIX, '{out}']),
  [`bundle materialize: ambiguous prefix`, ['bundle', 'materialize', PREFIX, '{out}'], 'AMBIGUOUS_DIGEST', 2],
  ...scenarioCases(['diff', PREFIX, PREFIX]),
  [`diff: ambiguous prefix`, ['diff', PREFIX, PREFIX], 'AMBIGUOUS_DIGEST', 2],
  ...scenarioCases(['status']),
  ...scenarioCases(['log']),
  ...scenarioCases(['rollback', '--rationale', 'x']),
  [`rollback: ambiguous --expect-active`, ['rollback', '--rationale', 'x', '--expect-active', PREFIX], 'AMBIGUOUS_DIGEST', 2],
  [`rollback: no rollback target`, ['rollback', '--rationale', 'x'], 'NO_ROLLBACK_TARGET', 2],
  [`rollback: bad --lock-timeout`, ['rollback', '--rationale', 'x', '--lock-timeout', 'soon'], 'USAGE', 2],
  ...scenarioCases(['epoch', 'rollover', '--evaluator-epoch', 'e2']),
  ...scenarioCases(['verify']),
  [`unknown flag`, ['status', '--frobnicate'], 'USAGE', 2],
  [`missing required flag`, ['propose'], 'USAGE', 2],
];

describe('bad input: one clear line, a stable code, the documented exit code, and knowledge/ unchanged', () => {
  it.each(cases)('%s', (_name, args, code, exit) => {
    const fill = (a: string) => a.replace(/^\{(\w+)\}$/, (_m, k: string) => (k === 'out' ? path.join(dir, 'out') : files[k]!));
    const argv = [...args.map(fill), ...(args[0] === 'bundle' && args[1] === 'build' ? [] : ['--knowledge', knowledge])];
    const before = treeHash(dir);
    const r = runCli([...argv, '--json']);
    expect({status: r.status, code: r.json?.error?.code}).toEqual({status: exit, code});
    const {data, ...error} = r.json.error;
    expect({status: r.json.status, error}).toEqual({status: 'error', error: {code, message: expect.any(String), exit_code: exit}});
    if (data !== undefined) expect(typeof data === 'object' && data !== null && !Array.isArray(data)).toBe(true); // the error's data, when it has any
    expect(resultSchemaProblem('result-error', r.json)).toBeNull();
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.json.error.message).not.toMatch(/\n/);
    expect(treeHash(dir)).toBe(before);
  });

  it('without --json the error is one line on stderr naming the code, and stdout is empty', () => {
    const r = runCliProcess(['bundle', 'show', PREFIX, '--knowledge', knowledge]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error AMBIGUOUS_DIGEST: cfe230ca matches 2 bundles: /);
  });
});

describe('a bad stored file is exit 8 and names the file', () => {
  it.each([
    ['malformed active.json', 'demo/context_bundles/active.json', '{"schema_version": 1,'],
    ['active.json schema violation', 'demo/context_bundles/active.json', '{"schema_version": 1}'],
    ['unsafe integer in active.json', 'demo/context_bundles/active.json', '{"schema_version": 9007199254740993}'],
  ])('%s', (_name, rel, text) => {
    const copy = path.join(tempDir(), 'knowledge');
    fs.cpSync(knowledge, copy, {recursive: true});
    fs.writeFileSync(path.join(copy, rel), text);
    const before = treeHash(copy);
    for (const args of [['status'], ['propose', '--from', path.join(dir, 'c0')], ['verify'], ['rollback', '--rationale', 'x'], ['epoch', 'rollover', '--evaluator-epoch', 'e9']]) {
      const r = runCli([...args, '--knowledge', copy, '--json']);
      expect(r.status).toBe(8);
      expect(r.json.status === 'error' ? r.json.error.message : r.json.errors[0].message).toContain(path.normalize(rel));
    }
    expect(treeHash(copy)).toBe(before);
  });
});
