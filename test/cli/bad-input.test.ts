import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {init} from '../../src/core/common/init.js';
import {propose} from '../../src/core/promotion/propose.js';
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
  await init({
    knowledge,
    scenario: 'demo',
    from: writeSource(path.join(dir, 'base'), {'playbook/playbook.md': 'baseline'}),
  });
  for (const [i, content] of COLLIDING.entries()) {
    await propose({
      knowledge,
      from: writeSource(path.join(dir, `c${i}`), {'playbook/playbook.md': content}),
      runId: `r${i}`,
    });
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
    forged: put(
      'forged.json',
      manifest([{kind: 'playbook', key: 'p', content: 'x', media_type: 'text/plain', digest: '0'.repeat(64)}]),
    ),
    unsafe: put(
      'unsafe.json',
      manifest([{kind: 'playbook', key: 'p', content: 'x'}]).replace('"epoch-1"', '"epoch-1","n":9007199254740993'),
    ),
    surrogate: put(
      'surrogate.json',
      manifest([{kind: 'playbook', key: 'p', content: 'x'}]).replace('"content":"x"', '"content":"\\ud800"'),
    ),
    unknownKind: writeSource(path.join(dir, 'badkind'), {'persona/p.md': 'x'}),
    badJsonComponent: writeSource(path.join(dir, 'badjson'), {'routing_config/roles.json': '{oops'}),
    missing: path.join(dir, 'does-not-exist.json'),
    handoffArray: put('handoff-array.json', '[{"summary": "a handoff is an object"}]'),
  };
  // One handoff revision and one pending receipt, so that the cases below meet real files.
  const handoff = runCli([
    'handoff',
    'write',
    '--id',
    'notes',
    '--from',
    put('handoff.json', '{"summary": "first"}'),
    '--knowledge',
    knowledge,
    '--json',
  ]);
  if (handoff.status !== 0) throw new Error(handoff.stdout + handoff.stderr);
  const prepared = runCli([
    'bootstrap',
    'prepare',
    '--integration',
    'codex',
    '--lifecycle',
    'startup',
    '--enabled',
    '--event-id',
    'e1',
    '--handoff',
    'notes@1',
    '--knowledge',
    knowledge,
    '--json',
  ]);
  if (prepared.status !== 0) throw new Error(prepared.stdout + prepared.stderr);
  // A named release (the baseline, v1), so that the release cases meet a real descriptor.
  const active = JSON.parse(fs.readFileSync(path.join(knowledge, 'demo/context_bundles/active.json'), 'utf8'))
    .bundle_digest as string;
  const named = runCli(['release', 'name', 'v1', active, '--knowledge', knowledge, '--json']);
  if (named.status !== 0) throw new Error(named.stdout + named.stderr);
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
  [
    `rollback: ambiguous --expect-active`,
    ['rollback', '--rationale', 'x', '--expect-active', PREFIX],
    'AMBIGUOUS_DIGEST',
    2,
  ],
  [`rollback: --to an unknown version`, ['rollback', '--rationale', 'x', '--to', 'v404'], 'VERSION_NOT_FOUND', 2],
  [`rollback: --to not a version name`, ['rollback', '--rationale', 'x', '--to', 'v 1'], 'INVALID_NAME', 2],
  [`rollback: a bad --scope`, ['rollback', '--rationale', 'x', '--scope', 'eu west'], 'INVALID_NAME', 2],
  [`rollback: a bad --actor`, ['rollback', '--rationale', 'x', '--actor', ' '], 'USAGE', 2],
  [`rollback show: not an execution key`, ['rollback', 'show', 'RBX-1'], 'INVALID_INPUT', 2],
  [
    `rollback show: an unknown execution key`,
    ['rollback', 'show', 'RBX-20260101000000-0123abcd'],
    'UNKNOWN_EXECUTION',
    2,
  ],
  [
    `rollback approve: an unknown execution key`,
    ['rollback', 'approve', 'RBX-20260101000000-0123abcd', '--actor', 'bob'],
    'UNKNOWN_EXECUTION',
    2,
  ],
  [`rollback: bad --lock-timeout`, ['rollback', '--rationale', 'x', '--lock-timeout', 'soon'], 'USAGE', 2],
  ...scenarioCases(['epoch', 'rollover', '--evaluator-epoch', 'e2']),
  ...scenarioCases(['verify']),
  ...scenarioCases(['tag', 'list']),
  [`tag add: not a digest`, ['tag', 'add', 'abc123'], 'INVALID_DIGEST', 2],
  [`tag add: a digest no stored bundle holds`, ['tag', 'add', '0'.repeat(64)], 'COMPONENT_NOT_FOUND', 2],
  [`tag rm: a digest not tagged`, ['tag', 'rm', '0'.repeat(64)], 'COMPONENT_NOT_FOUND', 2],
  [`reference add: the scenario itself`, ['reference', 'add', 'demo'], 'INVALID_INPUT', 2],
  [`reference add: ../x`, ['reference', 'add', '../x'], 'INVALID_NAME', 2],
  [`reference rm: not a reference`, ['reference', 'rm', 'billing'], 'INVALID_INPUT', 2],
  [`grant add: the scenario itself`, ['grant', 'add', 'demo'], 'INVALID_INPUT', 2],
  [`handoff write: malformed JSON`, ['handoff', 'write', '--id', 'notes', '--from', '{malformed}'], 'INVALID_JSON', 2],
  [
    `handoff write: not a JSON object`,
    ['handoff', 'write', '--id', 'notes', '--from', '{handoffArray}'],
    'INVALID_INPUT',
    2,
  ],
  [`handoff write: missing file`, ['handoff', 'write', '--id', 'notes', '--from', '{missing}'], 'INPUT_NOT_FOUND', 2],
  [`handoff write: bad id`, ['handoff', 'write', '--id', 'a b', '--from', '{malformed}'], 'INVALID_NAME', 2],
  [`handoff show: unknown revision`, ['handoff', 'show', 'notes@2'], 'HANDOFF_NOT_FOUND', 2],
  [`handoff show: no revision named`, ['handoff', 'show', 'notes'], 'USAGE', 2],
  [
    `bootstrap render: unknown handoff revision`,
    ['bootstrap', 'render', '--handoff', 'notes@9'],
    'HANDOFF_NOT_FOUND',
    2,
  ],
  [`bootstrap render: "latest" is not a revision`, ['bootstrap', 'render', '--handoff', 'notes@latest'], 'USAGE', 2],
  [`bootstrap render: byte limit under 512`, ['bootstrap', 'render', '--max-bytes', '511'], 'USAGE', 2],
  [`bootstrap render: byte limit over 8192`, ['bootstrap', 'render', '--max-bytes', '8193'], 'USAGE', 2],
  ...scenarioCases(['bootstrap', 'render']),
  [
    `bootstrap prepare: byte limit out of range`,
    ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'startup', '--enabled', '--max-bytes', '100000'],
    'USAGE',
    2,
  ],
  [
    `bootstrap prepare: unknown lifecycle`,
    ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'boot'],
    'USAGE',
    2,
  ],
  [
    `bootstrap prepare: integration with a space`,
    ['bootstrap', 'prepare', '--integration', 'claude code', '--lifecycle', 'startup', '--enabled'],
    'USAGE',
    2,
  ],
  ...['nope/../x', '../x', '..', 'a/b', 'a\\b', '.hidden', '-x', 'x'.repeat(65), 'cl\u0430ude'].map(
    (name): [string, string[], string, number] => [
      `bootstrap prepare: integration ${JSON.stringify(name)}, with an event id`,
      [
        'bootstrap',
        'prepare',
        '--integration',
        name,
        '--lifecycle',
        'startup',
        '--enabled',
        '--event-id',
        'e-integration',
      ],
      'USAGE',
      2,
    ],
  ),
  [
    `bootstrap prepare: event id with a control character`,
    ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'startup', '--enabled', '--event-id', 'a\u0007b'],
    'USAGE',
    2,
  ],
  [
    `bootstrap prepare: the same event with another byte limit`,
    [
      'bootstrap',
      'prepare',
      '--integration',
      'codex',
      '--lifecycle',
      'startup',
      '--enabled',
      '--event-id',
      'e1',
      '--handoff',
      'notes@1',
      '--max-bytes',
      '2048',
    ],
    'BOOTSTRAP_REQUEST_MISMATCH',
    2,
  ],
  [
    `bootstrap prepare: the same event with another handoff`,
    ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'startup', '--enabled', '--event-id', 'e1'],
    'BOOTSTRAP_REQUEST_MISMATCH',
    2,
  ],
  [`bootstrap claim: bad receipt id`, ['bootstrap', 'claim', 'receipt-1', '--outcome', 'injected'], 'INVALID_INPUT', 2],
  [
    `bootstrap claim: unknown receipt`,
    ['bootstrap', 'claim', `bcr_${'0'.repeat(32)}`, '--outcome', 'injected'],
    'RECEIPT_NOT_FOUND',
    2,
  ],
  [
    `bootstrap claim: unknown outcome`,
    ['bootstrap', 'claim', `bcr_${'0'.repeat(32)}`, '--outcome', 'shown'],
    'USAGE',
    2,
  ],
  [`recall: blank query`, ['recall', '--query', '  '], 'USAGE', 2],
  [`recall: byte limit out of range`, ['recall', '--query', 'x', '--max-bytes', '10'], 'USAGE', 2],
  [`recall: bad receipt id`, ['recall', '--query', 'x', '--receipt', 'bcr_XYZ'], 'INVALID_INPUT', 2],
  [`hook install: no --host`, ['hook', 'install', '--project', '/tmp', '--scenario', 'demo'], 'USAGE', 2],
  [
    `hook install: an unknown host`,
    ['hook', 'install', '--host', 'cursor', '--project', '/tmp', '--scenario', 'demo'],
    'USAGE',
    2,
  ],
  [
    `hook install: both --project and --user`,
    ['hook', 'install', '--host', 'codex', '--project', '/tmp', '--user', '--scenario', 'demo'],
    'USAGE',
    2,
  ],
  [
    `hook install: neither --project nor --user`,
    ['hook', 'install', '--host', 'codex', '--scenario', 'demo'],
    'USAGE',
    2,
  ],
  [
    `hook install: a scenario the tree lacks`,
    ['hook', 'install', '--host', 'codex', '--project', '/tmp/autoctx-no-such-project', '--scenario', 'nope'],
    'SCENARIO_NOT_FOUND',
    2,
  ],
  [`release name: a name with a space`, ['release', 'name', 'v 2', PREFIX], 'INVALID_NAME', 2],
  [`release name: an ambiguous digest`, ['release', 'name', 'v2', PREFIX], 'AMBIGUOUS_DIGEST', 2],
  [
    `release name: an unknown parent`,
    ['release', 'name', 'v2', '{candidate0}', '--parent-version', 'v0'],
    'VERSION_NOT_FOUND',
    2,
  ],
  [
    `release name: a rollback target twice`,
    ['release', 'name', 'v2', PREFIX, '--rollback-target', 'v1', 'V1'],
    'USAGE',
    2,
  ],
  [
    `release name: golden inputs that are not fixtures`,
    ['release', 'name', 'v2', PREFIX, '--golden-inputs', '{malformed}'],
    'INVALID_JSON',
    2,
  ],
  [
    `release name: missing golden inputs`,
    ['release', 'name', 'v2', PREFIX, '--golden-inputs', '{missing}'],
    'INPUT_NOT_FOUND',
    2,
  ],
  [`release name: a second name for one bundle`, ['release', 'name', 'v2', '{active}'], 'DIGEST_ALREADY_NAMED', 2],
  [`release name: v1 again, as V1`, ['release', 'name', 'V1', '{active}'], 'VERSION_EXISTS', 2],
  [
    `release name: an unknown rollback target`,
    ['release', 'name', 'v2', '{candidate0}', '--rollback-target', 'v9'],
    'VERSION_NOT_FOUND',
    2,
  ],
  [`release name: a bad scope`, ['release', 'name', 'v2', PREFIX, '--scope', 'eu/west'], 'INVALID_NAME', 2],
  [`release show: unknown release`, ['release', 'show', 'v9'], 'VERSION_NOT_FOUND', 2],
  [`release transition: no rationale`, ['release', 'transition', 'v1', '--to', 'SHADOW'], 'USAGE', 2],
  [
    `release transition: a blank rationale`,
    ['release', 'transition', 'v1', '--to', 'SHADOW', '--rationale', ' '],
    'USAGE',
    2,
  ],
  [
    `release transition: an unknown state`,
    ['release', 'transition', 'v1', '--to', 'LIVE', '--rationale', 'x'],
    'INVALID_INPUT',
    2,
  ],
  [
    `release transition: canary settings for a shadow`,
    ['release', 'transition', 'v1', '--to', 'SHADOW', '--canary-percent', '5', '--rationale', 'x'],
    'USAGE',
    2,
  ],
  [
    `release transition: a percentage over 100`,
    ['release', 'transition', 'v1', '--to', 'CANARY', '--canary-percent', '101', '--rationale', 'x'],
    'USAGE',
    2,
  ],
  [
    `release transition: three decimals`,
    ['release', 'transition', 'v1', '--to', 'SHADOW', '--shadow-percent', '0.125', '--rationale', 'x'],
    'USAGE',
    2,
  ],
  [
    `release transition: a negative daily cap`,
    ['release', 'transition', 'v1', '--to', 'SHADOW', '--shadow-daily-cap', '-1', '--rationale', 'x'],
    'USAGE',
    2,
  ],
  [
    `release transition: a short --expect-registry`,
    ['release', 'transition', 'v1', '--to', 'SHADOW', '--expect-registry', 'abc', '--rationale', 'x'],
    'INVALID_DIGEST',
    2,
  ],
  [
    `release transition: a stale --expect-registry`,
    ['release', 'transition', 'v1', '--to', 'SHADOW', '--expect-registry', '0'.repeat(64), '--rationale', 'x'],
    'STALE_REGISTRY',
    6,
  ],
  [
    `release transition: unknown release`,
    ['release', 'transition', 'v9', '--to', 'SHADOW', '--rationale', 'x'],
    'VERSION_NOT_FOUND',
    2,
  ],
  [
    `release transition: an actor with a newline`,
    ['release', 'transition', 'v1', '--to', 'SHADOW', '--rationale', 'x', '--actor', 'a\nb'],
    'USAGE',
    2,
  ],
  [`release runnable: neither versions nor --all`, ['release', 'runnable', '--rationale', 'x'], 'USAGE', 2],
  [
    `release runnable: a default outside the set`,
    ['release', 'runnable', 'v1', '--default', 'v2', '--rationale', 'x'],
    'USAGE',
    2,
  ],
  [`release runnable: an unknown release`, ['release', 'runnable', 'v7', '--rationale', 'x'], 'VERSION_NOT_FOUND', 2],
  [`release history: a bad scope`, ['release', 'history', '--scope', '.x'], 'INVALID_NAME', 2],
  [`route: a user with a newline`, ['route', '--user', 'a\nb'], 'USAGE', 2],
  [
    `route: a resource address over 512 characters`,
    ['route', '--user', 'u', '--resource-address', 'x'.repeat(513)],
    'USAGE',
    2,
  ],
  [`route: a bad scope`, ['route', '--scope', 'eu west'], 'INVALID_NAME', 2],
  ...scenarioCases(['route', '--user', 'u']),
  [`shadow sample: no event`, ['shadow', 'sample'], 'USAGE', 2],
  [`shadow sample: an empty event`, ['shadow', 'sample', '--event', ''], 'USAGE', 2],
  [
    `shadow sample: an event with a control character`,
    ['shadow', 'sample', '--event', 'a\u0007b', '--consume'],
    'USAGE',
    2,
  ],
  [`shadow sample: a bad scope`, ['shadow', 'sample', '--event', 'e', '--scope', '../x'], 'INVALID_NAME', 2],
  [
    `release transition: a blank canary salt`,
    ['release', 'transition', 'v1', '--to', 'CANARY', '--canary-salt', ' ', '--rationale', 'x'],
    'USAGE',
    2,
  ],
  [`unknown flag`, ['status', '--frobnicate'], 'USAGE', 2],
  [`missing required flag`, ['propose'], 'USAGE', 2],
];

describe('bad input: one clear line, a stable code, the documented exit code, and knowledge/ unchanged', () => {
  it.each(cases)('%s', (_name, args, code, exit) => {
    const fill = (a: string) =>
      a.replace(/^\{(\w+)\}$/, (_m, k: string) => (k === 'out' ? path.join(dir, 'out') : files[k]!));
    files.active ??= JSON.parse(
      fs.readFileSync(path.join(knowledge, 'demo/context_bundles/active.json'), 'utf8'),
    ).bundle_digest;
    files.candidate0 ??= fs.readdirSync(path.join(knowledge, 'demo/context_bundles/candidates')).sort()[0]!;
    const argv = [
      ...args.map(fill),
      ...(args[0] === 'bundle' && args[1] === 'build' ? [] : ['--knowledge', knowledge]),
    ];
    const before = treeHash(dir);
    const r = runCli([...argv, '--json']);
    expect({status: r.status, code: r.json?.error?.code}).toEqual({status: exit, code});
    const {data, ...error} = r.json.error;
    expect({status: r.json.status, error}).toEqual({
      status: 'error',
      error: {code, message: expect.any(String), exit_code: exit},
    });
    // the error's data, when it has any
    if (data !== undefined) expect(typeof data === 'object' && data !== null && !Array.isArray(data)).toBe(true);
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
    for (const args of [
      ['status'],
      ['propose', '--from', path.join(dir, 'c0')],
      ['verify'],
      ['rollback', '--rationale', 'x'],
      ['epoch', 'rollover', '--evaluator-epoch', 'e9'],
    ]) {
      const r = runCli([...args, '--knowledge', copy, '--json']);
      expect(r.status).toBe(8);
      expect(r.json.status === 'error' ? r.json.error.message : r.json.errors[0].message).toContain(
        path.normalize(rel),
      );
    }
    expect(treeHash(copy)).toBe(before);
  });
});
