import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {openScenario} from '../../src/core/common/store-options.js';
import {nextReceipt} from '../../src/core/release/release.js';
import {normalized, scopeView} from '../../src/core/release/registry-view.js';
import {route} from '../../src/core/release/route.js';
import {verify} from '../../src/core/common/verify.js';
import {applyTransition} from '../../src/model/release/release-gate.js';
import {createReceipt} from '../../src/store/kinds/release/release-receipt.js';
import {swapRegistry} from '../../src/store/kinds/release/release-registry.js';
import {runCli} from '../helpers/cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';

/**
 * One rule: a rejected bundle (a rejected record, a negative result, a stale
 * rejection) never serves anywhere: not through active.json, not as a
 * release's ACTIVE, CANARY or SHADOW in any scope. Every rejection ends what
 * serves it (or is refused), every reader of what serves passes it over, and
 * verify fails on a tree that serves one.
 */
let t: Tree;
let v2 = '';
let v3 = '';
/** v1 (the baseline) ACTIVE, v2 and v3 confirmed and named, v2 a 100% CANARY. */
let canaryTree = '';
const users = Array.from({length: 20}, (_, i) => `user-${i}`);

function run(k: string, args: string[], env?: NodeJS.ProcessEnv) {
  return runCli([...args, '--knowledge', k, '--json'], {env});
}
function must(k: string, args: string[], env?: NodeJS.ProcessEnv) {
  const r = run(k, args, env);
  if (r.status !== 0) throw new Error(`${args.join(' ')} → ${r.status}: ${r.stdout}${r.stderr}`);
  return r.json;
}
function copy(from: string, label: string): string {
  const dir = path.join(tempDir(`autoctx-rejected-${label}-`), 'knowledge');
  fs.cpSync(from, dir, {recursive: true});
  return dir;
}
const states = (k: string, scope = 'global') =>
  Object.fromEntries(
    must(k, ['release', 'list', '--scope', scope]).scopes[0].releases.map((r: {version: string; state: string}) => [
      r.version,
      r.state,
    ]),
  );
/** How many of the users routing sends to `digest` (core/release/route, what `autoctx route` answers). */
const routed = (k: string, digest: string, scope = 'global') =>
  users.filter((user) => route({knowledge: k, user, scope}).bundle_digest === digest).length;
const errors = (k: string) => verify({knowledge: k}).errors.map((e) => e.code);
const receipts = (k: string, scope = 'global') =>
  must(k, ['release', 'history', '--scope', scope]).receipts as Array<{
    version: string;
    from_state: string;
    target_state: string;
    applied: boolean;
    rationale: string;
    blockers: Array<{code: string}>;
  }>;

beforeAll(() => {
  t = makeTree();
  v2 = t.propose('v2', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  v3 = t.propose('v3', {
    'playbook/playbook.md': 'Be helpful, precise and kind.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  for (const d of [v2, v3]) must(t.knowledge, ['confirm', d, ...evalArgs()], fakeEnv(t.dir));
  must(t.knowledge, ['release', 'name', 'v1', t.baseline]);
  must(t.knowledge, ['release', 'name', 'v2', v2]);
  must(t.knowledge, ['release', 'name', 'v3', v3]);
  must(t.knowledge, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 's']);
  must(t.knowledge, ['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '100', '--rationale', 'all']);
  canaryTree = t.knowledge;
}, 180_000);

describe('a rejection ends what serves the bundle, with a receipt', () => {
  it(
    'a promotion over the bundle a canary was tested against ends the ' +
      'canary, in every scope, each by a receipt, before the pointer moves',
    () => {
      const k = copy(canaryTree, 'stale');
      must(k, [
        'release',
        'transition',
        'v2',
        '--to',
        'CANARY',
        '--canary-percent',
        '10',
        '--rationale',
        'ten percent',
      ]);
      for (const to of ['SHADOW', 'CANARY'])
        must(k, ['release', 'transition', 'v2', '--to', to, '--scope', 'eu', '--rationale', to]);
      expect(routed(k, v2)).toBeGreaterThan(0);
      const promoted = must(k, ['promote', v3]); // v3 is DRAFT: promoted over v1, the bundle v2 was tested against
      for (const scope of ['global', 'eu']) {
        expect(states(k, scope)).toMatchObject({v2: 'DEPRECATED'});
        expect(routed(k, v2, scope)).toBe(0);
        expect(receipts(k, scope).at(-1)).toMatchObject({
          version: 'v2',
          from_state: 'CANARY',
          target_state: 'DEPRECATED',
          applied: true,
          rationale:
            `withdrawn: promotion ${promoted.promotion_id} replaces ` +
            `${t.baseline}, the bundle its canary evidence compares with`,
        });
      }
      expect(states(k)).toMatchObject({v3: 'ACTIVE'});
      // Its transition to ACTIVE is blocked by the table (only a rollback makes a DEPRECATED release ACTIVE); nothing
      // serves it.
      const r = run(k, ['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'go']);
      expect([r.status, r.json.blockers.map((b: {code: string}) => b.code)]).toEqual([3, ['ILLEGAL_STATE_TRANSITION']]);
      expect(errors(k)).toEqual([]);
    },
  );

  it.each(['eu', 'us'])(
    'a promotion that finds the registry of scope %s edited by hand is refused (exit 8, ' +
      'INTEGRITY) before it writes anything: no promotion record, diff, attribution or receipt',
    (scope) => {
      const k = copy(canaryTree, `edited-${scope}`);
      for (const to of ['SHADOW', 'CANARY'])
        must(k, ['release', 'transition', 'v2', '--to', to, '--scope', scope, '--rationale', to]);
      const file = path.join(k, 'demo/context_bundles/releases/registry', `${scope}.json`);
      const registry = JSON.parse(fs.readFileSync(file, 'utf8'));
      registry.releases.v2.canary = {...registry.releases.v2.canary, basis_points: 10_000};
      fs.writeFileSync(file, `${JSON.stringify(registry, null, 2)}\n`);
      const before = treeHash(k);
      const r = run(k, ['promote', v3]);
      expect([r.status, r.json.error?.code, r.json.error?.data?.file]).toEqual([
        8,
        'INTEGRITY',
        `demo/context_bundles/releases/registry/${scope}.json`,
      ]);
      expect(treeHash(k)).toBe(before);
    },
  );

  it(
    'a stale rejection of a canary (its transition to ACTIVE ' + 'after the pointer moved) ends the canary it finds',
    () => {
      const k = copy(canaryTree, 'stale-rejection');
      // The pointer moved by a rollover, not a promotion: the canary stands until its own promotion finds it stale.
      must(k, [
        'release',
        'transition',
        'v2',
        '--to',
        'CANARY',
        '--canary-percent',
        '10',
        '--rationale',
        'ten percent',
      ]);
      must(k, ['epoch', 'rollover', '--evaluator-epoch', 'epoch-2']);
      const r = run(k, ['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'go']);
      expect([r.status, r.json.error.code]).toEqual([6, 'ACTIVE_MOVED']);
      expect(fs.existsSync(path.join(k, `demo/context_bundles/candidates/${v2}/stale_terminalization.json`))).toBe(
        true,
      );
      expect(states(k)).toMatchObject({v2: 'DEPRECATED'});
      expect(routed(k, v2)).toBe(0);
      const history = receipts(k);
      expect(history.at(-2)).toMatchObject({
        version: 'v2',
        from_state: 'CANARY',
        target_state: 'DEPRECATED',
        applied: true,
        rationale: expect.stringMatching(
          /^withdrawn: its candidate is rejected \(confirmed candidate incumbent .* is stale/,
        ),
      });
      expect(history.at(-1)).toMatchObject({version: 'v2', target_state: 'ACTIVE', applied: false});
      expect(errors(k)).toEqual([]);
    },
  );

  it(
    "reject by hand of a CANARY's bundle: the canary is " + 'DEPRECATED first, by a receipt; nobody is routed to it',
    () => {
      const k = copy(canaryTree, 'canary');
      expect(routed(k, v2)).toBe(users.length);
      expect(must(k, ['reject', v2, '--rationale', 'no'])).toMatchObject({status: 'rejected', already_rejected: false});
      expect(states(k)).toMatchObject({v2: 'DEPRECATED'});
      expect(routed(k, v2)).toBe(0);
      expect(receipts(k).at(-1)).toMatchObject({
        version: 'v2',
        from_state: 'CANARY',
        target_state: 'DEPRECATED',
        applied: true,
        rationale: 'withdrawn: its candidate is rejected (rejected by hand: no)',
      });
      expect(must(k, ['bootstrap', 'render', '--user', 'user-1']).routing.bundle_digest).toBe(t.baseline);
      expect(errors(k)).toEqual([]);
      // The rejected bundle can enter no serving state again.
      const back = run(k, ['release', 'transition', 'v2', '--to', 'CANARY', '--rationale', 'again']);
      expect([back.status, back.json.blockers.map((b: {code: string}) => b.code)]).toEqual([
        3,
        ['CANDIDATE_REJECTED', 'ILLEGAL_STATE_TRANSITION'],
      ]);
    },
  );

  it(
    "reject by hand of a SHADOW's bundle, in another scope too: each " +
      'SHADOW is RETIRED by a receipt and no shadow run samples it',
    () => {
      const k = copy(canaryTree, 'shadow');
      must(k, ['release', 'transition', 'v3', '--to', 'SHADOW', '--shadow-percent', '100', '--rationale', 's']);
      must(k, [
        'release',
        'transition',
        'v3',
        '--to',
        'SHADOW',
        '--shadow-percent',
        '100',
        '--scope',
        'eu',
        '--rationale',
        's',
      ]);
      expect(must(k, ['shadow', 'sample', '--event', 'e-1']).version).toBe('v3');
      must(k, ['reject', v3, '--rationale', 'no']);
      expect(states(k)).toMatchObject({v3: 'RETIRED'});
      expect(states(k, 'eu')).toMatchObject({v3: 'RETIRED'});
      expect(must(k, ['shadow', 'sample', '--event', 'e-1'])).toMatchObject({
        status: 'not_sampled',
        reason: 'no_shadow',
      });
      expect(must(k, ['shadow', 'sample', '--event', 'e-1', '--scope', 'eu'])).toMatchObject({
        status: 'not_sampled',
        reason: 'no_shadow',
      });
      expect(errors(k)).toEqual([]);
    },
  );

  it("reject of a bundle that is a scope's ACTIVE is refused (exit 2) and writes nothing", () => {
    const k = copy(canaryTree, 'scope-active');
    for (const to of ['SHADOW', 'CANARY', 'ACTIVE'])
      must(k, ['release', 'transition', 'v3', '--to', to, '--scope', 'eu', '--rationale', to]);
    const before = treeHash(k);
    const r = run(k, ['reject', v3, '--rationale', 'no']);
    expect([r.status, r.json.error.code, r.json.error.message]).toEqual([
      2,
      'INVALID_TRANSITION',
      expect.stringContaining('release v3 is ACTIVE in scope eu'),
    ]);
    expect(treeHash(k)).toBe(before);
  });
});

describe('every kind of rejection keeps the rule', () => {
  it("an evaluation that rejects a SHADOW's bundle RETIRES the SHADOW first", () => {
    const k = copy(canaryTree, 'evaluated');
    const worse = path.join(path.dirname(k), 'worse');
    fs.mkdirSync(path.join(worse, 'playbook'), {recursive: true});
    fs.writeFileSync(path.join(worse, 'playbook/playbook.md'), 'Be vague.\n');
    const d = must(k, ['propose', '--from', worse, '--run-id', 'worse']).bundle_digest;
    must(k, ['release', 'name', 'v4', d]);
    must(k, ['release', 'transition', 'v4', '--to', 'SHADOW', '--shadow-percent', '100', '--rationale', 'look']);
    const r = run(k, ['confirm', d, ...evalArgs()], fakeEnv(path.dirname(k), {FAKE_DELTA: '-0.3'}));
    expect([r.status, r.json.status]).toEqual([3, 'rejected']);
    expect(states(k)).toMatchObject({v4: 'RETIRED'});
    expect(receipts(k).at(-1)).toMatchObject({
      version: 'v4',
      from_state: 'SHADOW',
      target_state: 'RETIRED',
      applied: true,
    });
    expect(errors(k)).toEqual([]);
  });

  it("a stale candidate that is a scope's ACTIVE is not rejected by promote (exit 6, nothing written)", () => {
    const k = copy(canaryTree, 'stale-scope-active');
    for (const to of ['SHADOW', 'CANARY', 'ACTIVE'])
      must(k, ['release', 'transition', 'v3', '--to', to, '--scope', 'eu', '--rationale', to]);
    must(k, ['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'v2 everywhere']);
    const r = run(k, ['promote', v3]);
    expect([r.status, r.json.error.code, r.json.error.message]).toEqual([
      6,
      'ACTIVE_MOVED',
      expect.stringContaining('the candidate is not rejected, since it serves (release v3 is ACTIVE in scope eu)'),
    ]);
    expect(fs.existsSync(path.join(k, `demo/context_bundles/candidates/${v3}/stale_terminalization.json`))).toBe(false);
    expect(
      JSON.parse(fs.readFileSync(path.join(k, `demo/context_bundles/candidates/${v3}/record.json`), 'utf8')).lifecycle,
    ).toBe('confirmed');
    expect(errors(k)).toEqual([]);
  });
});

describe('a promotion cut short after active.json: its candidate serves, so it cannot be rejected', () => {
  it('reject is refused (exit 2, nothing written), and repair then completes the promotion', () => {
    const tree = makeTree();
    const b = tree.propose('b', {
      'playbook/playbook.md': 'Be helpful and precise.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    must(tree.knowledge, ['confirm', b, ...evalArgs()], fakeEnv(tree.dir));
    const trace = path.join(tree.dir, 'trace');
    const clean = copy(tree.knowledge, 'trace');
    must(clean, ['promote', b], {AUTOCTX_FAULT_TRACE: trace});
    const points = fs
      .readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    const pointer = points.findIndex(([point, file]) => point!.endsWith(':after') && file === 'active.json');
    expect(pointer).toBeGreaterThan(-1);
    // Every kill from the pointer's write to the end of the promotion: the record is not yet (or just) active.
    for (const [point] of points.slice(pointer)) {
      if (!point!.endsWith(':after')) continue;
      const k = copy(tree.knowledge, 'cut');
      expect(run(k, ['promote', b], {AUTOCTX_FAULT: point}).status).toBeNull();
      // The lock the killed process left is taken over (moved aside), which is not a change of the tree's documents.
      const documents = (rel: string) => path.basename(rel).startsWith('autoctx.lock');
      const before = treeHash(k, documents);
      const r = run(k, ['reject', b, '--rationale', 'after the crash']);
      expect([point, r.status, r.json.error.code]).toEqual([point, 2, 'INVALID_TRANSITION']);
      expect(treeHash(k, documents)).toBe(before);
      must(k, ['repair']);
      const after = verify({knowledge: k});
      expect([point, after.errors, after.warnings.map((w) => w.code)]).toEqual([point, [], []]);
      expect(
        JSON.parse(fs.readFileSync(path.join(k, `demo/context_bundles/candidates/${b}/record.json`), 'utf8')).lifecycle,
      ).toBe('active');
    }
  }, 120_000);
});

describe('every reader of what serves reads the registry in force', () => {
  it(
    'a registry one receipt behind (a transition cut short): route, ' +
      "bootstrap render and prepare, and recall all take the receipt's",
    () => {
      const k = copy(canaryTree, 'behind');
      must(k, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'back']);
      const trace = path.join(path.dirname(k), 'trace');
      const probe = copy(k, 'probe');
      must(
        probe,
        ['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '100', '--rationale', 'all again'],
        {AUTOCTX_FAULT_TRACE: trace},
      );
      const lines = fs
        .readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '));
      const receipt = lines.find(
        ([point, file]) => point!.endsWith(':after') && /^[0-9a-f]{64}\.json$/.test(file!),
      )![0]!; // the receipt, named by its digest
      expect(
        run(
          k,
          ['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '100', '--rationale', 'all again'],
          {
            AUTOCTX_FAULT: receipt,
          },
        ).status,
      ).toBeNull();
      expect(verify({knowledge: k}).warnings.map((w) => w.code)).toContain('REGISTRY_PENDING');
      expect(must(k, ['route', '--user', 'user-1']).bundle_digest).toBe(v2);
      expect(must(k, ['bootstrap', 'render', '--user', 'user-1']).routing).toMatchObject({
        bundle_digest: v2,
        state: 'CANARY',
      });
      expect(must(k, ['recall', '--query', 'helpful', '--user', 'user-1']).routing).toMatchObject({
        bundle_digest: v2,
        state: 'CANARY',
      });
      const prepared = must(k, [
        'bootstrap',
        'prepare',
        '--integration',
        'codex',
        '--lifecycle',
        'startup',
        '--enabled',
        '--event-id',
        'e-behind',
        '--user',
        'user-1',
      ]);
      expect(prepared.routing).toMatchObject({bundle_digest: v2, state: 'CANARY'});
    },
  );

  it(
    'a registry that names a rejected bundle (written before this rule, or ' +
      'by hand): verify fails, and nothing routes, delivers or samples it',
    async () => {
      const k = copy(canaryTree, 'forged');
      must(k, ['release', 'transition', 'v3', '--to', 'SHADOW', '--rationale', 's']);
      must(k, ['reject', v2, '--rationale', 'no']);
      must(k, ['reject', v3, '--rationale', 'no']);
      // A registry chain as an older autoctx left it: v2 CANARY, v3 SHADOW, though both are rejected.
      const store = openScenario({knowledge: k});
      await store.withLock(5, () => {
        for (const [version, to, scope] of [
          ['v2', 'CANARY', 'global'],
          ['v3', 'SHADOW', 'global'],
          ['v2', 'ACTIVE', 'eu'],
        ] as const) {
          const view = scopeView(store, scope);
          const registry = {
            ...view.state.registry,
            releases: {...view.state.registry.releases, [version]: {version, state: to, canary: null, shadow: null}},
          };
          const next = normalized(
            applyTransition(registry, {
              version,
              to,
              settings: to === 'SHADOW' ? {shadow: {basis_points: 10_000}} : {canary: {basis_points: null}},
              deprecate: [],
            }),
            view,
          );
          const receipt = nextReceipt(
            store,
            view.state,
            {
              action: 'transition',
              version,
              bundle_digest: version === 'v2' ? v2 : v3,
              actor: 'old',
              at: '2026-01-01T00:00:00Z',
              from_state: 'SHADOW',
              requested_state: to,
              target_state: to,
              applied: true,
              blockers: [],
              rationale: 'old',
              deprecated_versions: [],
              promotion_id: null,
            },
            next,
          );
          createReceipt(store, receipt);
          swapRegistry(store, scope, view.state.digest, receipt.registry!);
        }
      });
      expect(states(k)).toMatchObject({v2: 'CANARY', v3: 'SHADOW'});
      const found = verify({knowledge: k})
        .errors.filter((e) => e.code === 'REJECTED_SERVING')
        .map((e) => e.message);
      expect(found).toEqual([
        expect.stringContaining('release v2 as ACTIVE in scope eu'),
        expect.stringContaining('release v2 as CANARY'),
        expect.stringContaining('release v3 as SHADOW'),
      ]);
      // verify says why, in the words of the one definition every reader of what serves uses.
      expect(found.every((m) => m.includes(`(candidate ${m.includes('v3') ? v3 : v2} is rejected)`))).toBe(true);
      expect(routed(k, v2)).toBe(0);
      expect(must(k, ['route', '--user', 'user-1', '--scope', 'eu'])).toMatchObject({
        bundle_digest: t.baseline,
        active_source: 'global',
      });
      expect(must(k, ['bootstrap', 'render', '--user', 'user-1']).routing.bundle_digest).toBe(t.baseline);
      expect(must(k, ['shadow', 'sample', '--event', 'e-1']).reason).toBe('no_shadow');
      // A session pinned to it before it was rejected leaves it at its next delivery.
      const pinned = {bundle_digest: v2, version: 'v2', state: 'CANARY', reason: 'canary'} as const;
      const {render} = await import('../../src/core/delivery/bootstrap.js');
      expect(render({knowledge: k, user: 'user-1', pinned}).routing?.bundle_digest).toBe(t.baseline);
      // repair ends both, each by its receipt.
      expect(must(k, ['repair']).actions).toEqual(
        expect.arrayContaining([
          expect.stringContaining('ended the CANARY of release v2'),
          expect.stringContaining('ended the SHADOW of release v3'),
        ]),
      );
      expect(states(k)).toMatchObject({v2: 'DEPRECATED', v3: 'RETIRED'});
      // A scope's ACTIVE is left to a rollback of that scope.
      expect(errors(k)).toEqual(['REJECTED_SERVING']);
    },
  );
});
