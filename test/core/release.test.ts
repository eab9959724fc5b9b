import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {
  releaseHistory,
  releaseList,
  releaseName,
  releaseRunnable,
  releaseShow,
  releaseTransition,
} from '../../src/core/release/release.js';
import {rollback} from '../../src/core/rollback/rollback.js';
import {verify} from '../../src/core/common/verify.js';
import {RELEASE_STATES, TRANSITIONS, type ReleaseState} from '../../src/model/release/release.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {mustIn} from '../helpers/knowledge-cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';
import {chainOrder} from '../helpers/git-histories.js';

/**
 * The release use cases called as a library (core/release), without the CLI:
 * the transition table, the receipts and what each transition writes. The
 * CLI's exit codes, output and flags for the same commands are tested in
 * test/cli/releases.test.ts.
 */
const CANDIDATE = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};

let t: Tree;
let a: string;
/** A copy of the knowledge tree with release v2 in each state. */
const templates = new Map<ReleaseState, string>();
const dirs: string[] = [];

function copy(from: string, label: string): string {
  const dir = tempDir(`autoctx-core-release-${label}-`);
  dirs.push(dir);
  const k = path.join(dir, 'knowledge');
  fs.cpSync(from, k, {recursive: true});
  return k;
}
const receiptsOf = (knowledge: string, scope = 'global') => {
  const dir = path.join(knowledge, 'demo/context_bundles/releases/receipts', scope);
  return fs.existsSync(dir)
    ? chainOrder(dir, 'previous_receipt_sha256').map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')))
    : [];
};
/** A tree hash leaving out the receipts folder: a blocked transition changes nothing else. */
const hashBesideReceipts = (knowledge: string) => {
  const moved = path.join(path.dirname(knowledge), 'receipts-aside');
  const dir = path.join(knowledge, 'demo/context_bundles/releases/receipts');
  const had = fs.existsSync(dir);
  if (had) fs.renameSync(dir, moved);
  try {
    return treeHash(knowledge);
  } finally {
    if (had) fs.renameSync(moved, dir);
  }
};
/** What a command prints with --json: the result, through JSON. */
const asJson = (x: unknown) => JSON.parse(JSON.stringify(x));

beforeAll(async () => {
  t = makeTree();
  dirs.push(t.dir);
  a = t.propose('better', CANDIDATE);
  mustIn(t.knowledge, ['confirm', a, ...evalArgs()], 0, fakeEnv(t.dir));
  await releaseName({knowledge: t.knowledge, version: 'v1', digest: t.baseline});
  await releaseName({knowledge: t.knowledge, version: 'v2', digest: a, parentVersion: 'v1', rollbackTargets: ['v1']});
  templates.set('DRAFT', t.knowledge);
  const step = async (from: ReleaseState, to: ReleaseState, run: (k: string) => Promise<{status: string}>) => {
    const k = copy(templates.get(from)!, to);
    expect(['applied', 'rolled_back']).toContain((await run(k)).status);
    templates.set(to, k);
  };
  await step('DRAFT', 'SHADOW', (k) =>
    releaseTransition({knowledge: k, version: 'v2', to: 'SHADOW', rationale: 'shadow'}),
  );
  await step('SHADOW', 'CANARY', (k) =>
    releaseTransition({knowledge: k, version: 'v2', to: 'CANARY', rationale: 'canary'}),
  );
  await step('CANARY', 'ACTIVE', (k) =>
    releaseTransition({knowledge: k, version: 'v2', to: 'ACTIVE', rationale: 'go'}),
  );
  await step('ACTIVE', 'DEPRECATED', (k) => rollback({knowledge: k, rationale: 'back'}));
  await step('DEPRECATED', 'RETIRED', (k) =>
    releaseTransition({knowledge: k, version: 'v2', to: 'RETIRED', rationale: 'done'}),
  );
}, 120_000);
afterAll(() => dirs.forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

describe('every cell of the transition table, applied and blocked, with its receipt', () => {
  it('reaches each state as releaseList and releaseShow report it', () => {
    for (const [state, k] of templates) {
      expect([state, releaseList({knowledge: k}).scopes[0]!.releases.find((r) => r.version === 'v2')!.state]).toEqual([
        state,
        state,
      ]);
      expect([state, releaseShow({knowledge: k, version: 'v2'}).states[0]!.state]).toEqual([state, state]);
    }
  });

  it('applies what the table allows when the evidence holds, ' +
    'blocks the rest with a receipt and nothing else written', async () => {
    const cells: string[] = [];
    for (const from of RELEASE_STATES) {
      for (const to of RELEASE_STATES) {
        const k = copy(templates.get(from)!, `${from}-${to}`);
        const before = receiptsOf(k).length;
        const hash = hashBesideReceipts(k);
        const r = await releaseTransition({knowledge: k, version: 'v2', to, rationale: `${from} to ${to}`});
        expect(resultSchemaProblem('result-release-transition', asJson(r))).toBeNull();
        const receipts = receiptsOf(k);
        expect(receipts).toHaveLength(before + 1);
        expect(receipts.at(-1)).toMatchObject({
          version: 'v2',
          from_state: from,
          target_state: to,
          requested_state: to,
          applied: r.status === 'applied',
          rationale: `${from} to ${to}`,
          seq: r.receipt_seq,
        });
        if (r.status !== 'applied') expect(hashBesideReceipts(k)).toBe(hash);
        else expect(releaseShow({knowledge: k, version: 'v2'}).states[0]!.state).toBe(to);
        cells.push(
          `${from}→${to} ` +
            `${r.status === 'applied' ? 'applied' : `${r.status} ${r.blockers.map((b) => b.code).join(',')}`}`,
        );
        expect(verify({knowledge: k}).errors).toEqual([]);
        fs.rmSync(path.dirname(k), {recursive: true, force: true});
      }
    }
    const expected: string[] = [];
    for (const from of RELEASE_STATES) {
      for (const to of RELEASE_STATES) {
        const legal = TRANSITIONS[from].includes(to);
        // ACTIVE→DEPRECATED is in the table, but the global scope has one ACTIVE: deprecating it needs another.
        expected.push(
          `${from}→${to} ` +
            (!legal
              ? 'blocked ILLEGAL_STATE_TRANSITION'
              : from === 'ACTIVE'
                ? 'blocked NO_OTHER_ACTIVE_RELEASE'
                : 'applied'),
        );
      }
    }
    expect(cells).toEqual(expected);
  }, 300_000);
});

describe('the global ACTIVE is a promotion', () => {
  it(
    "writes promote's record and the pointer, deprecates the " +
      'release that served, and keeps ACTIVE out of the registry',
    async () => {
      const k = copy(templates.get('CANARY')!, 'active');
      const r = await releaseTransition({knowledge: k, version: 'v2', to: 'ACTIVE', rationale: 'go'});
      expect(r).toMatchObject({
        status: 'applied',
        from_state: 'CANARY',
        target_state: 'ACTIVE',
        deprecated_versions: ['v1'],
      });
      const active = JSON.parse(fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8'));
      expect(active).toMatchObject({bundle_digest: a, promotion_id: r.promotion_id});
      expect(fs.existsSync(path.join(k, `demo/context_bundles/promotions/${r.promotion_id}.json`))).toBe(true);
      const registry = JSON.parse(
        fs.readFileSync(path.join(k, 'demo/context_bundles/releases/registry/global.json'), 'utf8'),
      );
      expect(Object.values(registry.releases).map((x) => (x as {state: string}).state)).not.toContain('ACTIVE');
      expect(releaseHistory({knowledge: k}).receipts.at(-1)).toMatchObject({
        version: 'v2',
        target_state: 'ACTIVE',
        applied: true,
      });
    },
  );

  it('a dry run runs the gate and writes nothing', async () => {
    const k = copy(templates.get('CANARY')!, 'dry');
    const before = treeHash(k);
    expect(
      await releaseTransition({knowledge: k, version: 'v2', to: 'ACTIVE', rationale: 'x', dryRun: true}),
    ).toMatchObject({status: 'allowed', dry_run: true, receipt_seq: null});
    expect(
      await releaseTransition({knowledge: k, version: 'v2', to: 'DRAFT', rationale: 'x', dryRun: true}),
    ).toMatchObject({status: 'blocked', blockers: [{code: 'ILLEGAL_STATE_TRANSITION'}]});
    expect(treeHash(k)).toBe(before);
  });
});

describe('the runnable set', () => {
  it('is a registry change with its own receipt, and releaseList reports the registry it wrote', async () => {
    const k = copy(templates.get('SHADOW')!, 'runnable');
    const r = await releaseRunnable({
      knowledge: k,
      versions: ['v1', 'v2'],
      defaultVersion: 'v1',
      rationale: 'what this build ships',
    });
    expect(resultSchemaProblem('result-release-runnable', asJson(r))).toBeNull();
    expect(r).toMatchObject({
      status: 'applied',
      scope: 'global',
      runnable: {versions: ['v1', 'v2'], default_version: 'v1'},
    });
    expect(receiptsOf(k).at(-1)).toMatchObject({seq: r.receipt_seq, applied: true});
    expect(releaseList({knowledge: k}).scopes[0]!.registry_digest).toBe(r.registry_after);
    expect(verify({knowledge: k}).errors).toEqual([]);
  });
});
