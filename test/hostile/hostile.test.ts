import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {init} from '../../src/core/common/init.js';
import {propose} from '../../src/core/promotion/propose.js';
import {status} from '../../src/core/common/status.js';
import {verify} from '../../src/core/common/verify.js';
import {ingestTrials} from '../../src/core/evaluation/trials-ingest.js';
import {evaluateCandidate} from '../../src/core/evaluation/evaluate.js';
import {materialize} from '../../src/core/bundle/bundle.js';
import {isAutoctxError} from '../../src/errors.js';
import {FIXTURES_12, POLICY_SMALL, trialResult} from '../helpers/pipeline.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

/**
 * A corpus of hostile inputs, generated here: every case must fail with a
 * stable code and the documented exit code (2 for input given by the user, 8
 * for a bad stored file) and leave the knowledge tree (files, folders, links)
 * exactly as it was.
 */
let dir: string;
let k: string;
let parent: string;
let candidate: string;
let units: string[];
const tried: string[] = [];

beforeAll(async () => {
  dir = tempDir('autoctx-hostile-');
  k = path.join(dir, 'knowledge');
  parent = (
    await init({
      knowledge: k,
      scenario: 'demo',
      from: writeSource(path.join(dir, 'base'), {'playbook/playbook.md': 'base\n'}),
    })
  ).bundle_digest;
  candidate = (
    await propose({knowledge: k, from: writeSource(path.join(dir, 'cand'), {'playbook/playbook.md': 'cand\n'})})
  ).bundle_digest;
  const out = path.join(dir, 'units.jsonl');
  runCli([
    'plan',
    'export',
    candidate,
    '--engine',
    'x',
    '--fixtures',
    FIXTURES_12,
    '--policy',
    POLICY_SMALL,
    '--out',
    out,
    '--knowledge',
    k,
    '--json',
  ]);
  units = fs.readFileSync(out, 'utf8').trim().split('\n');
});
afterAll(() => {
  process.stdout.write(`hostile input: ${tried.length} cases tried\n`);
  fs.rmSync(dir, {recursive: true, force: true});
});

let n = 0;
function file(text: string | Buffer): string {
  const f = path.join(dir, `input-${n++}`);
  fs.writeFileSync(f, text);
  return f;
}

async function expectRefused(name: string, fn: () => unknown, exit: number, code?: string | RegExp): Promise<void> {
  const before = treeHash(k);
  let error: unknown;
  try {
    await fn();
  } catch (e) {
    error = e;
  }
  tried.push(name);
  expect([name, isAutoctxError(error)]).toEqual([name, true]);
  const e = error as {code: string; exitCode: number; message: string};
  expect([name, e.exitCode]).toEqual([name, exit]);
  if (code instanceof RegExp) expect([name, e.code]).toEqual([name, expect.stringMatching(code)]);
  else if (code) expect([name, e.code]).toEqual([name, code]);
  expect(e.message).not.toMatch(/\n/);
  expect([name, treeHash(k)]).toEqual([name, before]);
}

const manifest = (over: Record<string, unknown> = {}, component: Record<string, unknown> = {}) =>
  JSON.stringify({
    scenario: 'demo',
    evaluator_epoch: 'epoch-1',
    parent_digest: parent,
    components: [{kind: 'playbook', key: 'playbook', content: 'x', media_type: 'text/markdown', ...component}],
    ...over,
  });

describe('bad input given by the user: exit 2, tree unchanged', () => {
  // Cases are built inside the tests: the parent digest exists only once the tree does.
  const fractions = Array.from({length: 24}, (_, i) => (i + 1) / 26);
  it.each(fractions)('malformed JSON: the manifest cut at %f of its length', async (fraction) => {
    const good = manifest();
    const at = Math.floor(fraction * good.length);
    await expectRefused(
      `truncated ${at}`,
      () => propose({knowledge: k, from: file(good.slice(0, at))}),
      2,
      /INVALID_JSON|NESTING/,
    );
  });

  const garbage: Array<[string, (good: string) => string]> = [
    ['empty file', () => ''],
    ['trailing garbage', (good) => `${good} x`],
    ['two objects', (good) => `${good}${good}`],
    ['single quotes', (good) => good.replace(/"/g, "'")],
    ['NaN literal', (good) => good.replace('"x"', 'NaN')],
    ['Infinity literal', (good) => good.replace('"x"', 'Infinity')],
    ['a comment', (good) => `// c\n${good}`],
    ['a trailing comma', (good) => good.replace(']}', '],}')],
    ['unquoted key', (good) => good.replace('"scenario"', 'scenario')],
    ['hex number', (good) => good.replace('"epoch-1"', '0x10')],
    ['control character in a string', (good) => good.replace('"x"', '"a\u0001b"')],
    ['invalid UTF-8', (good) => good],
  ];
  it.each(garbage)('malformed JSON: %s', async (name, make) => {
    const good = manifest();
    const f =
      name === 'invalid UTF-8'
        ? file(Buffer.concat([Buffer.from(good.slice(0, 20)), Buffer.from([0xff, 0xfe]), Buffer.from(good.slice(20))]))
        : file(make(good));
    await expectRefused(name, () => propose({knowledge: k, from: f}), 2, /INVALID_JSON|INVALID_UTF8/);
  });

  const violations: Array<[string, () => string]> = [
    ['a top-level array', () => JSON.stringify([1, 2])],
    ['a string', () => '"manifest"'],
    ['scenario a number', () => manifest({scenario: 7})],
    ['epoch missing', () => JSON.stringify({scenario: 'demo', parent_digest: parent, components: []})],
    ['epoch null', () => manifest({evaluator_epoch: null})],
    ['parent a number', () => manifest({parent_digest: 1})],
    ['components an object', () => manifest({components: {}})],
    ['a component null', () => manifest({components: [null]})],
    ['component kind missing', () => manifest({}, {kind: undefined})],
    ['component key a number', () => manifest({}, {key: 3})],
    ['component key blank', () => manifest({}, {key: '  '})],
    ['component content a number', () => manifest({}, {content: 5})],
    ['component content null', () => manifest({}, {content: null})],
    ['media type blank', () => manifest({}, {media_type: ''})],
    ['media type a list', () => manifest({}, {media_type: ['text/plain']})],
    ['an extra property', () => manifest({extra: true})],
    ['an extra component property', () => manifest({}, {weight: 1})],
    ['schema_version 2', () => manifest({schema_version: 2})],
    ['an unknown kind', () => manifest({}, {kind: 'persona'})],
    [
      'duplicate components',
      () =>
        JSON.stringify({
          scenario: 'demo',
          evaluator_epoch: 'epoch-1',
          parent_digest: parent,
          components: [
            {kind: 'hints', key: 'a', content: '1'},
            {kind: 'hints', key: 'a', content: '2'},
          ],
        }),
    ],
    ['a digest that is not a string', () => manifest({digest: 12})],
  ];
  it.each(violations)('schema violation: %s', async (name, make) => {
    await expectRefused(name, () => propose({knowledge: k, from: file(make())}), 2);
  });

  const forged: Array<[string, () => string]> = [
    ['a forged component digest', () => manifest({}, {digest: '0'.repeat(64)})],
    ['a component digest of other content', () => manifest({}, {digest: 'f'.repeat(64)})],
    ['a forged manifest digest', () => manifest({digest: 'a'.repeat(64)})],
    ['a truncated manifest digest', () => manifest({digest: 'abc'})],
  ];
  it.each(forged)('%s', async (name, make) => {
    await expectRefused(name, () => propose({knowledge: k, from: file(make())}), 2, 'DIGEST_MISMATCH');
  });

  const unsafe = [
    '9007199254740992',
    '-9007199254740992',
    '9007199254740993',
    '1e20',
    '123456789012345678901234567890',
  ];
  it.each(unsafe)('unsafe integer %s', async (num) => {
    await expectRefused(
      `unsafe ${num}`,
      () => propose({knowledge: k, from: file(manifest().replace('"epoch-1"', `"epoch-1","n":${num}`))}),
      2,
      'UNSAFE_INTEGER',
    );
    await expectRefused(
      `unsafe ${num} nested`,
      () =>
        propose({knowledge: k, from: file(manifest({}, {meta: undefined}).replace('"x"', `"x","z":[[{"q":${num}}]]`))}),
      2,
      'UNSAFE_INTEGER',
    );
  });

  const surrogates = ['\\ud800', '\\udfff', '\\ud83d', 'a\\udc00b'];
  it.each(surrogates)('lone surrogate %s in a value and in a key', async (s) => {
    await expectRefused(
      `surrogate value ${s}`,
      () => propose({knowledge: k, from: file(manifest().replace('"x"', `"${s}"`))}),
      2,
      'LONE_SURROGATE',
    );
    await expectRefused(
      `surrogate key ${s}`,
      () => propose({knowledge: k, from: file(manifest().replace('"scenario"', `"${s}":1,"scenario"`))}),
      2,
      'LONE_SURROGATE',
    );
  });

  it('deeply nested and very large documents', async () => {
    await expectRefused(
      'nesting 300',
      () => propose({knowledge: k, from: file(`${'['.repeat(300)}${']'.repeat(300)}`)}),
      2,
      'NESTING_TOO_DEEP',
    );
    await expectRefused(
      'nesting 100000',
      () => propose({knowledge: k, from: file(`${'['.repeat(100000)}${']'.repeat(100000)}`)}),
      2,
      'NESTING_TOO_DEEP',
    );
    const big =
      `{"scenario":"demo","evaluator_epoch":"epoch-1","parent_digest":"${parent}","comp` +
      `onents":[${Array.from({length: 200000}, () => '1').join(',')},9007199254740993]}`;
    await expectRefused(
      '8 MB with an unsafe integer at the end',
      () => propose({knowledge: k, from: file(big)}),
      2,
      'UNSAFE_INTEGER',
    );
  });

  // Refused names (autoctx accepts what the Python implementation accepts, 'süd', '~', 'a b' among them:
  // test/cli/scenario-names.test.ts).
  const names = [
    '../x',
    '..',
    '.',
    'a/b',
    'a\\b',
    '',
    ' ',
    ' demo',
    'demo\t',
    'x'.repeat(256),
    'a\u0000b',
    'a\u0085b',
    '.hidden',
    'demo/../demo',
    '/etc',
  ];
  it.each(names)('scenario name %j', async (name) => {
    await expectRefused(
      `scenario ${JSON.stringify(name)}`,
      () => init({knowledge: k, scenario: name, from: path.join(dir, 'base')}),
      2,
      'INVALID_NAME',
    );
    await expectRefused(
      `scenario ${JSON.stringify(name)} (status)`,
      () => status({knowledge: k, scenario: name}),
      2,
      'INVALID_NAME',
    );
  });

  it('a campaign id that is empty is refused; one with a path is confined to a digest folder', async () => {
    await expectRefused(
      'blank campaign',
      () =>
        evaluateCandidate({
          knowledge: k,
          candidate,
          mode: 'screen',
          evaluator: 'true',
          fixtures: FIXTURES_12,
          policyFile: POLICY_SMALL,
          campaign: '',
        }),
      2,
      'INVALID_NAME',
    );
  });

  const resultLine = () => JSON.parse(units[0]!);
  const ingestCases: Array<[string, (u: Record<string, unknown>) => unknown]> = [
    ['a bool seed', (u) => ({...u, seed: true})],
    ['a float seed', (u) => ({...u, seed: 1.5})],
    ['a string seed', (u) => ({...u, seed: String(u.seed)})],
    ['a string score', (u) => ({...u, candidate: {score: '0.5'}})],
    ['a null score', (u) => ({...u, candidate: {score: null}})],
    ['a missing score', (u) => ({...u, incumbent: {}})],
    ['a string boolean', (u) => ({...u, candidate: {score: 0.5, valid: 'true'}})],
    ['a number boolean', (u) => ({...u, incumbent: {score: 0.5, valid: 1}})],
    ['another plan', (u) => ({...u, plan_digest: 'b'.repeat(64)})],
    ['a forged pair key', (u) => ({...u, pair_key: 'c'.repeat(64)})],
    ['a relabeled lane', (u) => ({...u, lane: 'heldout'})],
    ['a renamed fixture', (u) => ({...u, fixture: 'other'})],
    ['a fixture outside the plan', (u) => ({...u, fixture_digest: 'd'.repeat(64)})],
    ['a wrong schema', (u) => ({...u, schema: 'autoctx.trial-result.v0'})],
    ['an array', () => []],
  ];
  it.each(ingestCases)('trials ingest: %s', async (name, mutate) => {
    const u = resultLine();
    const line = trialResult(u, {score: 0.6}, {score: 0.5});
    await expectRefused(
      `ingest ${name}`,
      () => ingestTrials({knowledge: k, candidate, file: file(`${JSON.stringify(mutate(line))}\n`)}),
      2,
    );
  });

  const policies: Array<[string, unknown]> = [
    ['a list', []],
    ['min_screen_pairs 0', {min_screen_pairs: 0}],
    ['a float count', {min_confirmation_pairs: 2.5}],
    ['max below min', {min_confirmation_pairs: 8, max_confirmation_pairs: 4}],
    ['a string z', {confidence_z: '1.96'}],
    ['z zero', {confidence_z: 0}],
    ['an unknown key', {alpha: 0.05}],
    ['a boolean count', {min_heldout_pairs: true}],
  ];
  it.each(policies)('policy file: %s', async (name, policy) => {
    await expectRefused(
      `policy ${name}`,
      () =>
        evaluateCandidate({
          knowledge: k,
          candidate,
          mode: 'screen',
          evaluator: 'true',
          fixtures: FIXTURES_12,
          policyFile: file(JSON.stringify(policy)),
        }),
      2,
    );
  });

  const fixtures: Array<[string, string]> = [
    ['not JSON', 'fixture\n'],
    ['no name', '{"initial_state":1,"observation":1}\n'],
    ['no observation', '{"fixture":"a","initial_state":1}\n'],
    ['a bad lane', '{"fixture":"a","initial_state":1,"observation":1,"lane":"train"}\n'],
    ['an extra key', '{"fixture":"a","initial_state":1,"observation":1,"weight":2}\n'],
    [
      'identical fixtures',
      '{"fixture":"a","initial_state":1,"observation":1}\n{"fixture":"b","initial_state":1,"observation":1}\n',
    ],
    [
      'a repeated name',
      '{"fixture":"a","initial_state":1,"observation":1}\n{"fixture":"a","initial_state":2,"observation":1}\n',
    ],
    ['an unsafe integer', '{"fixture":"a","initial_state":9007199254740993,"observation":1}\n'],
    ['an empty file', '\n\n'],
    ['too few fixtures', '{"fixture":"a","initial_state":1,"observation":1}\n'],
  ];
  it.each(fixtures)('fixtures file: %s', async (name, text) => {
    await expectRefused(
      `fixtures ${name}`,
      () => evaluateCandidate({knowledge: k, candidate, mode: 'screen', evaluator: 'true', fixtures: file(text)}),
      2,
    );
  });
});

describe('bad stored files: exit 8, tree unchanged', () => {
  const record = () => path.join(k, `demo/context_bundles/candidates/${candidate}/record.json`);
  const bundle = () => path.join(k, `demo/context_bundles/bundles/${candidate}.json`);
  const active = () => path.join(k, 'demo/context_bundles/active.json');
  const cases: Array<[string, () => string, (text: string) => string]> = [
    ['a malformed record', record, (t) => t.slice(0, 30)],
    ['a record with a bad lifecycle', record, (t) => t.replace('"proposed"', '"promoted"')],
    [
      'a record naming another bundle',
      record,
      (t) => t.replace(/"bundle_digest": "[0-9a-f]+"/, `"bundle_digest": "${'e'.repeat(64)}"`),
    ],
    [
      'a record with an unsafe integer',
      record,
      (t) => t.replace('"source_generation": 0', '"source_generation": 9007199254740993'),
    ],
    ['a record with a lone surrogate', record, (t) => t.replace('"rationale": ""', '"rationale": "\\ud800"')],
    [
      'a record with a string generation',
      record,
      (t) => t.replace('"source_generation": 0', '"source_generation": "0"'),
    ],
    ['a manifest with changed content', bundle, (t) => t.replace('"cand\\n"', '"Cand\\n"')],
    [
      'a manifest with a forged digest',
      bundle,
      (t) => t.replace(`"digest": "${candidate}"`, `"digest": "${'0'.repeat(64)}"`),
    ],
    ['a manifest with an extra key', bundle, (t) => t.replace('{', '{"x": 1,')],
    ['an empty active.json', active, () => ''],
    [
      'active.json with a bool epoch',
      active,
      (t) => t.replace('"evaluator_epoch": "epoch-1"', '"evaluator_epoch": true'),
    ],
    [
      'active.json naming a missing bundle',
      active,
      (t) => t.replace(/"bundle_digest": "[0-9a-f]+"/, `"bundle_digest": "${'1'.repeat(64)}"`),
    ],
  ];
  it.each(cases)('%s', async (name, target, change) => {
    const f = target();
    const original = fs.readFileSync(f, 'utf8');
    fs.writeFileSync(f, change(original));
    try {
      const v = verify({knowledge: k});
      tried.push(name);
      expect([name, v.status, v.errors.length > 0]).toEqual([name, 'failed', true]);
      const r = runCli(['verify', '--knowledge', k, '--json']);
      expect([name, r.status]).toEqual([name, 8]);
      if (target === active && !name.includes('missing'))
        await expectRefused(`${name} (status)`, () => status({knowledge: k}), 8, 'CORRUPT_FILE');
    } finally {
      fs.writeFileSync(f, original);
    }
  });

  it.each<[string, string, string[]]>([
    ['the promotions folder', 'promotions', ['log']],
    ['a manifest', 'BUNDLE', ['bundle', 'show', 'CANDIDATE']],
    ['a candidate record', 'candidates/CANDIDATE/record.json', ['status']],
  ])(
    'a symbolic link out of the tree in place of %s: verify reports it, the command refuses (exit 8), nothing changes',
    (name, rel, args) => {
      const outside = path.join(dir, `outside-${n++}`);
      fs.mkdirSync(outside, {recursive: true});
      fs.writeFileSync(path.join(outside, 'owned.json'), '{}');
      const link = path.join(
        k,
        'demo/context_bundles',
        rel === 'BUNDLE' ? `bundles/${candidate}.json` : rel.replace('CANDIDATE', candidate),
      );
      const backup = path.join(dir, `backup-${n++}`);
      fs.mkdirSync(path.dirname(link), {recursive: true});
      if (rel === 'promotions' && !fs.existsSync(link)) fs.mkdirSync(link);
      fs.renameSync(link, backup);
      fs.symlinkSync(rel === 'promotions' ? outside : path.join(outside, 'owned.json'), link);
      try {
        const before = treeHash(k);
        const outsideBefore = treeHash(outside);
        const v = runCli(['verify', '--knowledge', k, '--json']);
        tried.push(`symlink ${name}`);
        expect([v.status, v.json.errors.map((e: {code: string}) => e.code)]).toEqual([
          8,
          expect.arrayContaining(['UNSAFE_PATH']),
        ]);
        const r = runCli([
          ...args.map((a) => a.replace('CANDIDATE', candidate).replace('PARENT', parent)),
          '--knowledge',
          k,
          '--json',
        ]);
        expect([r.status, r.json.error?.code]).toEqual([8, 'UNSAFE_PATH']);
        expect(treeHash(k)).toBe(before);
        expect(treeHash(outside)).toBe(outsideBefore);
      } finally {
        fs.rmSync(link, {force: true});
        fs.renameSync(backup, link);
      }
    },
  );

  it('component keys cannot escape the folder they are materialized into', async () => {
    const keys = ['../../escape', '/etc/passwd', '..', 'a/../../b', '\u0000', 'CON'];
    const m = JSON.stringify({
      scenario: 'demo',
      evaluator_epoch: 'epoch-1',
      parent_digest: parent,
      components: keys.map((key) => ({kind: 'prompt_fragment', key, content: key})),
    });
    const p = await propose({knowledge: k, from: file(m), runId: 'keys'});
    const out = path.join(dir, 'materialized');
    const r = materialize({knowledge: k, digest: p.bundle_digest, directory: out});
    tried.push('hostile component keys');
    for (const f of r.files) expect(path.resolve(out, f).startsWith(out + path.sep)).toBe(true);
    expect(fs.readdirSync(path.join(out, 'prompt_fragment'))).toHaveLength(keys.length);
  });
});

describe('evaluator answers that lie', () => {
  it.each([
    ['a wrong attestation', 'lie'],
    ['NaN as the score', 'nan'],
    ['two answers', 'extra'],
  ])('%s: exit 8, nothing recorded', async (name, mode) => {
    const fresh = (
      await propose({knowledge: k, from: file(manifest({}, {content: `lie ${mode}`})), runId: `lie-${mode}`})
    ).bundle_digest;
    const noArtifacts = (rel: string) => rel === path.join('.state', 'artifacts');
    const before = treeHash(k, noArtifacts);
    const r = runCli(
      [
        'screen',
        fresh,
        '--evaluator',
        `node ${path.resolve('test/fixtures/evaluators/fake.js')}`,
        '--fixtures',
        FIXTURES_12,
        '--policy',
        POLICY_SMALL,
        '--quiet',
        '--knowledge',
        k,
        '--json',
      ],
      {env: {FAKE_MODE: mode}},
    );
    tried.push(`evaluator ${name}`);
    expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_FAILED']);
    // The plan is bound before the first evaluation; no pair and no record changed.
    expect(fs.existsSync(path.join(k, `demo/context_bundles/candidates/${fresh}/matched_trials.json`))).toBe(false);
    expect(
      JSON.parse(fs.readFileSync(path.join(k, `demo/context_bundles/candidates/${fresh}/record.json`), 'utf8'))
        .lifecycle,
    ).toBe('proposed');
    // Only the plan, bound before the first evaluation, was written: without it the tree is as before (the state
    // area's artifact folder, made empty for the evaluator before it started, is no record and is safe to lose).
    fs.rmSync(path.join(k, `demo/context_bundles/candidates/${fresh}/evaluator_plan.json`));
    const artifacts = path.join(k, '.state/artifacts');
    expect(fs.existsSync(artifacts) ? fs.readdirSync(artifacts) : []).toEqual([]);
    expect(treeHash(k, noArtifacts)).toBe(before);
  });
});

describe('fuzzing: random damage to an input never crashes', () => {
  it('60 seeded random mutations of a manifest: accepted, or refused with exit 2 and a stable code', async () => {
    const {buildBundle} = await import('../../src/core/bundle/bundle.js');
    const good = Buffer.from(manifest({}, {content: 'fuzz me \u00e9\u{1F600}'}));
    let seed = 20261130;
    const rand = (m: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % m;
    };
    const alphabet = Buffer.from('{}[]",:0123456789.eE-+ \\u\\"ntfl\u00ff\u0000');
    for (let i = 0; i < 60; i++) {
      const bytes = Buffer.from(good);
      for (let j = 0, edits = 1 + rand(4); j < edits; j++) bytes[rand(bytes.length)] = alphabet[rand(alphabet.length)]!;
      const f = file(bytes);
      tried.push(`fuzz ${i}`);
      try {
        buildBundle({from: f});
      } catch (error) {
        expect([i, isAutoctxError(error), (error as {exitCode?: number}).exitCode]).toEqual([i, true, 2]);
        expect((error as Error).message).not.toMatch(/\n/);
      }
    }
  });
});

describe('canonical JSON properties (fast-check)', () => {
  it('the digest does not depend on key order; canonical text round-trips; rejected values are rejected', async () => {
    const fc = (await import('fast-check')).default;
    const {canonicalJson, stableDigest, parseJson} = await import('../../src/canonical/index.js');
    const {jsonValues} = await import('../helpers/arbitraries.js');
    const json = jsonValues({
      text: fc.string({unit: 'grapheme'}),
      key: fc.string({unit: 'grapheme', maxLength: 6}),
      canonical: true,
    });
    const shuffleKeys = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(shuffleKeys);
      if (v && typeof v === 'object')
        return Object.fromEntries(
          Object.entries(v)
            .reverse()
            .map(([k2, x]) => [k2, shuffleKeys(x)]),
        );
      return v;
    };
    fc.assert(
      fc.property(json, (v) => {
        const text = canonicalJson(v);
        expect(stableDigest(shuffleKeys(v))).toBe(stableDigest(v));
        expect(canonicalJson(parseJson(text))).toBe(text);
      }),
      {numRuns: 300, seed: 986},
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constant(Number.NaN),
          fc.constant(Infinity),
          fc.constant(-Infinity),
          fc.bigInt({min: 2n ** 53n, max: 2n ** 60n}).map((b) => (b % 2n === 0n ? 1 : -1) * Number(b)),
        ),
        (bad) => {
          expect(() => canonicalJson({x: [bad]})).toThrow();
        },
      ),
      {numRuns: 50, seed: 986},
    );
    fc.assert(
      fc.property(fc.integer({min: 0xd800, max: 0xdfff}), (unit) => {
        expect(() => canonicalJson({[String.fromCharCode(unit)]: 1})).toThrow(/lone UTF-16 surrogate/);
        expect(() => parseJson(`"\\u${unit.toString(16)}"`)).toThrow(/lone UTF-16 surrogate/);
      }),
      {numRuns: 50, seed: 986},
    );
    tried.push(
      'fast-check: key order',
      'fast-check: round trip',
      'fast-check: non-finite and unsafe',
      'fast-check: lone surrogates',
    );
  });
});
