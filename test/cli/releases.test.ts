import {spawn} from 'node:child_process';
import {createHash} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {type ReleaseState} from '../../src/model/release/release.js';
import {runCli} from '../helpers/cli.js';
import {AUDIT, evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';
import {chainOrder} from '../helpers/git-histories.js';

const CANDIDATE = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const rel = {receipts: 'releases/receipts/global', registry: 'releases/registry/global.json'};

let t: Tree;
let a: string;
/** A copy of the knowledge tree with release v2 in each state. */
const templates = new Map<ReleaseState, string>();

function cli(knowledge: string, args: string[], env?: NodeJS.ProcessEnv) {
  return runCli([...args, '--knowledge', knowledge, '--json'], {env});
}
function must(knowledge: string, args: string[], exit = 0, env?: NodeJS.ProcessEnv) {
  const r = cli(knowledge, args, env);
  if (r.status !== exit) throw new Error(`${args.join(' ')} → ${r.status}: ${r.stdout}${r.stderr}`);
  return r.json;
}
/** A copy of a knowledge tree in a fresh folder (`label` names the folder, for a reader of a failure). */
function copy(from: string, label: string): string {
  const dir = path.join(tempDir(`autoctx-release-${label}-`), 'knowledge');
  fs.cpSync(from, dir, {recursive: true});
  return dir;
}
/** Propose, in a copied tree, a candidate with this playbook (and the baseline's roles). */
function proposeIn(knowledge: string, name: string, playbook: string): string {
  const src = writeSource(path.join(path.dirname(knowledge), name), {...CANDIDATE, 'playbook/playbook.md': playbook});
  return must(knowledge, ['propose', '--from', src]).bundle_digest as string;
}
const receiptsOf = (knowledge: string, scope = 'global') => {
  const dir = path.join(knowledge, 'demo/context_bundles/releases/receipts', scope);
  return fs.existsSync(dir)
    ? chainOrder(dir, 'previous_receipt_sha256').map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')))
    : [];
};

beforeAll(() => {
  t = makeTree();
  a = t.propose('better', CANDIDATE);
  must(t.knowledge, ['confirm', a, ...evalArgs()], 0, fakeEnv(t.dir));
  must(t.knowledge, ['release', 'name', 'v1', t.baseline]);
  must(t.knowledge, ['release', 'name', 'v2', a, '--parent-version', 'v1', '--rollback-target', 'v1']);
  templates.set('DRAFT', t.knowledge);
  const step = (from: ReleaseState, to: ReleaseState, args: string[]) => {
    const k = copy(templates.get(from)!, to);
    must(k, args);
    templates.set(to, k);
  };
  step('DRAFT', 'SHADOW', ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'shadow']);
  step('SHADOW', 'CANARY', ['release', 'transition', 'v2', '--to', 'CANARY', '--rationale', 'canary']);
  step('CANARY', 'ACTIVE', ['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'go']);
  step('ACTIVE', 'DEPRECATED', ['rollback', '--rationale', 'back']);
  step('DEPRECATED', 'RETIRED', ['release', 'transition', 'v2', '--to', 'RETIRED', '--rationale', 'done']);
}, 120_000);

describe('every cell of the transition table, applied and blocked, with its receipt', () => {
  it('reaches each state as release list reports it', () => {
    for (const [state, k] of templates)
      expect([
        state,
        must(k, ['release', 'list']).scopes[0].releases.find((r: {version: string}) => r.version === 'v2').state,
      ]).toEqual([state, state]);
  });

  // Which cells apply and which are blocked, with their receipts, is tested on the library (test/core/release.test.ts);
  // here, the exit codes: 0 for an applied cell, 3 for a blocked one, with the blockers in the JSON.
  it('exits 0 for an applied cell and 3 for a blocked one, the blockers in its JSON', () => {
    const retired = copy(templates.get('RETIRED')!, 'exit-blocked');
    const blocked = cli(retired, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'back']);
    expect({exit: blocked.status, codes: blocked.json.blockers.map((b: {code: string}) => b.code)}).toEqual({
      exit: 3,
      codes: ['ILLEGAL_STATE_TRANSITION'],
    });
    expect(resultSchemaProblem('result-release-transition', blocked.json)).toBeNull();
    const applied = cli(copy(templates.get('SHADOW')!, 'exit-applied'), [
      'release',
      'transition',
      'v2',
      '--to',
      'CANARY',
      '--rationale',
      'on',
    ]);
    expect({exit: applied.status, status: applied.json.status}).toEqual({exit: 0, status: 'applied'});
    expect(resultSchemaProblem('result-release-transition', applied.json)).toBeNull();
  });
});

describe("the gate's evidence", () => {
  it('refuses a CANARY without a confirmed comparison against the bundle active.json names now', () => {
    const k = copy(templates.get('SHADOW')!, 'no-evidence');
    const c = proposeIn(k, 'other', 'Be brief.\n');
    must(k, ['release', 'name', 'v3', c]);
    must(k, ['release', 'transition', 'v3', '--to', 'SHADOW', '--rationale', 's']);
    const none = cli(k, ['release', 'transition', 'v3', '--to', 'CANARY', '--rationale', 'c']);
    expect({exit: none.status, codes: none.json.blockers.map((b: {code: string}) => b.code)}).toEqual({
      exit: 3,
      codes: ['EVALUATION_MISSING'],
    });
    // v3 confirmed against the baseline; then v2 is promoted, so v3's evidence is not against the bundle that serves
    // now.
    must(k, ['confirm', c, ...evalArgs()], 0, fakeEnv(path.dirname(k)));
    must(k, ['release', 'transition', 'v2', '--to', 'CANARY', '--rationale', 'c']);
    must(k, ['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'a']);
    const stale = cli(k, ['release', 'transition', 'v3', '--to', 'CANARY', '--rationale', 'c']);
    expect({exit: stale.status, codes: stale.json.blockers.map((b: {code: string}) => b.code)}).toEqual({
      exit: 3,
      codes: ['EVALUATION_NOT_FOR_BUNDLE_HASH'],
    });
  }, 120_000);

  it('runs the bound audit for a CANARY: a hold blocks it', () => {
    const k = copy(templates.get('DRAFT')!, 'audit');
    const dir = path.dirname(k);
    const src = path.join(dir, 'audited');
    fs.cpSync(path.join(path.dirname(t.knowledge), 'better'), src, {recursive: true});
    fs.appendFileSync(path.join(src, 'playbook/playbook.md'), 'Audited.\n');
    const c = must(k, ['propose', '--from', src]).bundle_digest;
    must(k, ['confirm', c, ...evalArgs(['--audit', `node ${AUDIT}`])], 0, {...fakeEnv(dir), FAKE_AUDIT: 'advisory'});
    must(k, ['release', 'name', 'v4', c]);
    must(k, ['release', 'transition', 'v4', '--to', 'SHADOW', '--rationale', 's']);
    const held = cli(k, ['release', 'transition', 'v4', '--to', 'CANARY', '--rationale', 'c'], {
      FAKE_AUDIT: 'review_required',
    });
    expect({exit: held.status, codes: held.json.blockers.map((b: {code: string}) => b.code)}).toEqual({
      exit: 3,
      codes: ['AUDIT_HOLD'],
    });
    expect(
      cli(k, ['release', 'transition', 'v4', '--to', 'CANARY', '--rationale', 'c'], {FAKE_AUDIT: 'advisory'}).status,
    ).toBe(0);
  }, 120_000);

  // What the global ACTIVE writes (promote's record, the pointer, no ACTIVE in the registry) is tested on the library
  // (test/core/release.test.ts).
  it("makes the global ACTIVE a promotion: promote's gates and its exit codes", () => {
    // A canary whose comparison is against a bundle that no longer serves: the promotion that replaced that bundle
    // ended the
    // canary (DEPRECATED, by a receipt), so the transition is blocked by the table; promote of it exits 6 (and rejects
    // it as stale).
    const k2 = copy(templates.get('CANARY')!, 'stale');
    const c = proposeIn(k2, 'third', 'Be helpful, precise and kind.\n');
    must(k2, ['confirm', c, ...evalArgs()], 0, fakeEnv(path.dirname(k2)));
    must(k2, ['promote', c]);
    expect(receiptsOf(k2).at(-1)).toMatchObject({
      applied: true,
      version: 'v2',
      from_state: 'CANARY',
      target_state: 'DEPRECATED',
    });
    const stale = cli(k2, ['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'go']);
    expect({exit: stale.status, code: stale.json.blockers?.[0]?.code}).toEqual({
      exit: 3,
      code: 'ILLEGAL_STATE_TRANSITION',
    });
    expect(receiptsOf(k2).at(-1)).toMatchObject({
      applied: false,
      target_state: 'ACTIVE',
      blockers: [{code: 'ILLEGAL_STATE_TRANSITION'}],
    });
    const promoted = cli(k2, ['promote', a]);
    expect({exit: promoted.status, code: promoted.json.error?.code}).toEqual({exit: 6, code: 'ACTIVE_MOVED'});
    expect(must(k2, ['verify']).errors).toEqual([]);
  }, 120_000);
});

describe('the registry', () => {
  it('changes by compare-and-swap: 16 processes with the same ' +
    '--expect-registry, one applies and 15 get STALE_REGISTRY (exit 6)', async () => {
    const k = copy(templates.get('DRAFT')!, 'race');
    const expected = must(k, ['release', 'list']).scopes[0].registry_digest;
    expect(expected).toBeNull();
    const run = () =>
      new Promise<{code: number | null; out: string}>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            path.join(PROJECT_ROOT, 'bin/run.js'),
            'release',
            'transition',
            'v2',
            '--to',
            'SHADOW',
            '--rationale',
            'race',
            '--expect-registry',
            'none',
            '--knowledge',
            k,
            '--json',
            '--lock-timeout',
            '60',
          ],
          {stdio: ['ignore', 'pipe', 'pipe']},
        );
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.on('close', (code) => resolve({code, out}));
      });
    const results = await Promise.all(Array.from({length: 16}, run));
    const codes = results.map((r) => r.code).sort();
    expect(codes).toEqual([0, ...Array(15).fill(6)]);
    for (const r of results.filter((x) => x.code === 6)) expect(JSON.parse(r.out).error.code).toBe('STALE_REGISTRY');
    expect(receiptsOf(k)).toHaveLength(1);
    expect(must(k, ['verify']).errors).toEqual([]);
  }, 120_000);

  it("--dry-run runs the gate, promote's gates for the global ACTIVE included, and writes nothing", () => {
    const k = copy(templates.get('CANARY')!, 'dry');
    const before = treeHash(k);
    expect(must(k, ['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'x', '--dry-run'])).toMatchObject({
      status: 'allowed',
      dry_run: true,
      receipt_seq: null,
    });
    const blocked = cli(k, ['release', 'transition', 'v2', '--to', 'DRAFT', '--rationale', 'x', '--dry-run']);
    expect({exit: blocked.status, codes: blocked.json.blockers.map((b: {code: string}) => b.code)}).toEqual({
      exit: 3,
      codes: ['ILLEGAL_STATE_TRANSITION'],
    });
    expect(treeHash(k)).toBe(before);
    const d = copy(templates.get('SHADOW')!, 'dry-evidence');
    const src = proposeIn(d, 'dry-src', 'Be quick.\n');
    must(d, ['release', 'name', 'v5', src]);
    must(d, ['release', 'transition', 'v5', '--to', 'SHADOW', '--rationale', 's']);
    const hash = treeHash(d);
    const none = cli(d, ['release', 'transition', 'v5', '--to', 'CANARY', '--rationale', 'x', '--dry-run']);
    expect({exit: none.status, codes: none.json.blockers.map((b: {code: string}) => b.code)}).toEqual({
      exit: 3,
      codes: ['EVALUATION_MISSING'],
    });
    expect(treeHash(d)).toBe(hash);
  });

  it('refuses a lost swap before anything is written, and names the digest to expect', () => {
    const k = copy(templates.get('SHADOW')!, 'stale');
    const before = treeHash(k);
    const r = cli(k, [
      'release',
      'transition',
      'v2',
      '--to',
      'SHADOW',
      '--shadow-percent',
      '5',
      '--rationale',
      'x',
      '--expect-registry',
      'none',
    ]);
    expect({exit: r.status, code: r.json.error.code}).toEqual({exit: 6, code: 'STALE_REGISTRY'});
    expect(treeHash(k)).toBe(before);
    const digest = must(k, ['release', 'list']).scopes[0].registry_digest;
    expect(
      must(k, [
        'release',
        'transition',
        'v2',
        '--to',
        'SHADOW',
        '--shadow-percent',
        '5',
        '--rationale',
        'x',
        '--expect-registry',
        digest,
      ]),
    ).toMatchObject({status: 'applied', registry_before: digest});
  });

  it('catches a hand-edited registry: verify names it (exit 8), and readers refuse it', () => {
    const k = copy(templates.get('SHADOW')!, 'edited');
    const file = path.join(k, 'demo/context_bundles', rel.registry);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    doc.releases.v2.shadow.basis_points = 10000;
    fs.writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
    const v = cli(k, ['verify']);
    expect(v.status).toBe(8);
    expect(v.json.errors.map((e: {code: string; file: string}) => `${e.code} ${e.file}`)).toContain(
      `REGISTRY_MISMATCH demo/context_bundles/${rel.registry}`,
    );
    for (const args of [
      ['release', 'list'],
      ['status'],
      ['release', 'transition', 'v2', '--to', 'CANARY', '--rationale', 'x'],
    ])
      expect([args[1], cli(k, args).status]).toEqual([args[1], 8]);
  });

  it('accepts older state names on input, records canonical ones, and refuses an older name in storage', () => {
    const k = copy(templates.get('DRAFT')!, 'alias');
    const r = must(k, ['release', 'transition', 'v2', '--to', 'eval_only', '--rationale', 'open the shadow run']);
    expect(r).toMatchObject({requested_state: 'eval_only', target_state: 'SHADOW'});
    const file = path.join(k, 'demo/context_bundles', rel.registry);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).releases.v2.state).toBe('SHADOW');
    expect(receiptsOf(k)[0]).toMatchObject({requested_state: 'eval_only', target_state: 'SHADOW'});
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"SHADOW"', '"EVAL_ONLY"'));
    const v = cli(k, ['verify']);
    expect(v.status).toBe(8);
    expect(v.json.errors.some((e: {file: string}) => e.file === `demo/context_bundles/${rel.registry}`)).toBe(true);
    expect(cli(k, ['release', 'list']).status).toBe(8);
    const unknown = copy(templates.get('DRAFT')!, 'unknown');
    const before = treeHash(unknown);
    const bad = cli(unknown, ['release', 'transition', 'v2', '--to', 'LIVE', '--rationale', 'x']);
    expect({exit: bad.status, code: bad.json.error.code}).toEqual({exit: 2, code: 'INVALID_INPUT'});
    expect(treeHash(unknown)).toBe(before);
  });

  it(
    'completes a transition cut short after its receipt: verify ' +
      'warns, status says repair, repair writes the registry',
    () => {
      const k = copy(templates.get('SHADOW')!, 'pending');
      const file = path.join(k, 'demo/context_bundles', rel.registry);
      const before = fs.readFileSync(file);
      must(k, ['release', 'transition', 'v2', '--to', 'SHADOW', '--shadow-percent', '7', '--rationale', 'x']);
      fs.writeFileSync(file, before); // as a crash between receipt and registry leaves it
      const v = must(k, ['verify']);
      expect(v.warnings.map((w: {code: string}) => w.code)).toContain('REGISTRY_PENDING');
      expect(must(k, ['status']).scenarios[0].repairable.join('\n')).toMatch(/release registry of scope global/);
      // Readers already see the receipt's registry.
      expect(
        must(k, ['release', 'list']).scopes[0].releases.find((r: {version: string}) => r.version === 'v2').shadow
          .basis_points,
      ).toBe(700);
      must(k, ['repair']);
      expect(must(k, ['verify']).warnings).toEqual([]);
    },
  );
});

describe('release names', () => {
  it(
    'refuses a name equal under case folding, a second name for one ' +
      'bundle, a rollback target that never served; the tree unchanged',
    () => {
      const k = copy(templates.get('DRAFT')!, 'names');
      const before = treeHash(k);
      const code = (args: string[]) => {
        const r = cli(k, args);
        return `${r.status} ${r.json.error?.code}`;
      };
      expect(code(['release', 'name', 'V2', a])).toBe('2 VERSION_EXISTS');
      expect(code(['release', 'name', 'v9', a])).toBe('2 DIGEST_ALREADY_NAMED');
      expect(code(['release', 'name', 'v3', a.slice(0, 12), '--rollback-target', 'v2'])).toBe(
        '2 ROLLBACK_TARGET_NOT_SERVED',
      );
      expect(code(['release', 'name', 'v3', t.baseline, '--rollback-target', 'v7'])).toBe('2 VERSION_NOT_FOUND');
      expect(code(['release', 'name', 'v 3', t.baseline])).toBe('2 INVALID_NAME');
      expect(
        code(['release', 'name', 'v3', t.baseline, '--golden-inputs', path.join(PROJECT_ROOT, 'package.json')]),
      ).toMatch(/^2 /);
      expect(treeHash(k)).toBe(before);
      // The same descriptor again is the run before, answered as it was.
      expect(must(k, ['release', 'name', 'v2', a, '--parent-version', 'v1', '--rollback-target', 'v1'])).toMatchObject({
        already_named: true,
      });
      expect(treeHash(k)).toBe(before);
    },
  );

  it(
    'reports a second spelling of a name stored beside the first (as a ' +
      'case-sensitive file system allows), and checks descriptors on read',
    () => {
      const k = copy(templates.get('DRAFT')!, 'spelling');
      const dir = path.join(k, 'demo/context_bundles/releases/versions');
      fs.copyFileSync(path.join(dir, 'v2.json'), path.join(dir, 'V2.json'));
      const v = cli(k, ['verify']);
      expect(v.status).toBe(8);
      expect(v.json.errors.map((e: {code: string}) => e.code)).toContain('DUPLICATE_VERSION');
      expect(cli(k, ['release', 'show', 'v2']).json.error.code).toBe('INTEGRITY');
      fs.rmSync(path.join(dir, 'V2.json'));
      fs.rmSync(path.join(k, `demo/context_bundles/bundles/${a}.json`));
      expect(cli(k, ['release', 'show', 'v2']).json.error.code).toBe('INTEGRITY');
    },
  );

  it('records golden inputs by digest and shows the descriptor', () => {
    const k = copy(templates.get('DRAFT')!, 'golden');
    const c = proposeIn(k, 'golden-src', 'Golden.\n');
    const fixtures = path.join(PROJECT_ROOT, 'test/fixtures/fixtures-12.jsonl');
    const r = must(k, [
      'release',
      'name',
      'v3',
      c,
      '--parent-version',
      'V2',
      '--golden-inputs',
      fixtures,
      '--vocabulary-version',
      'dict-3',
      '--compatible-vocabulary',
      'dict-2',
      'dict-1',
      '--model-profile',
      'fast',
    ]);
    expect(resultSchemaProblem('result-release-name', r)).toBeNull();
    const sha = createHash('sha256').update(fs.readFileSync(fixtures)).digest('hex');
    expect(r.descriptor).toMatchObject({
      version: 'v3',
      parent_version: 'v2',
      vocabulary_version: 'dict-3',
      compatible_vocabularies: ['dict-2', 'dict-1'],
      model_profiles: ['fast'],
      golden_inputs: [{name: 'fixtures-12.jsonl', sha256: sha, bytes: fs.statSync(fixtures).size}],
    });
    const shown = must(k, ['release', 'show', 'V3']);
    expect(resultSchemaProblem('result-release-show', shown)).toBeNull();
    expect(shown.descriptor).toEqual(r.descriptor);
    expect(resultSchemaProblem('result-release-list', must(k, ['release', 'list']))).toBeNull();
    expect(
      resultSchemaProblem('result-release-history', must(templates.get('RETIRED')!, ['release', 'history'])),
    ).toBeNull();
    expect(resultSchemaProblem('result-status', must(templates.get('RETIRED')!, ['status']))).toBeNull();
  });
});
