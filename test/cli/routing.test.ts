import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {openRouter} from '../../src/public/release.js';
import {releaseRunnable, releaseTransition} from '../../src/core/release/release.js';
import {route} from '../../src/core/release/route.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCli} from '../helpers/cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

let t: Tree;
let a: string;
/** v1 (the baseline) ACTIVE, v2 a 50% canary: copied for each test. */
let canaryTree: string;

function cli(knowledge: string, args: string[]) {
  return runCli([...args, '--knowledge', knowledge, '--json']);
}
function must(knowledge: string, args: string[], env?: NodeJS.ProcessEnv) {
  const r = runCli([...args, '--knowledge', knowledge, '--json'], {env});
  if (r.status !== 0) throw new Error(`${args.join(' ')} → ${r.status}: ${r.stdout}${r.stderr}`);
  return r.json;
}
function copy(label: string): string {
  const dir = path.join(tempDir(`autoctx-route-${label}-`), 'knowledge');
  fs.cpSync(canaryTree, dir, {recursive: true});
  return dir;
}
const users = Array.from({length: 40}, (_, i) => `user-${i}`);

beforeAll(() => {
  t = makeTree();
  a = t.propose('better', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  must(t.knowledge, ['confirm', a, ...evalArgs()], fakeEnv(t.dir));
  must(t.knowledge, ['release', 'name', 'v1', t.baseline]);
  must(t.knowledge, ['release', 'name', 'v2', a]);
  must(t.knowledge, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 's']);
  must(t.knowledge, ['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '50', '--rationale', 'half']);
  canaryTree = t.knowledge;
}, 120_000);

/** What `autoctx route --json` prints: route's result, through JSON. */
const asJson = (x: unknown) => JSON.parse(JSON.stringify(x));

// The routing decisions are tested on the library (route, openRouter); the command, once, for its JSON and its flags.
describe('autoctx route and openRouter', () => {
  it('autoctx route --json prints what route decides, for each requester flag', () => {
    for (const [flag, who] of [
      ['--user', {user: users[0]}],
      ['--session', {session: 's-1'}],
      ['--event', {event: 'e-1'}],
    ] as const) {
      const r = must(canaryTree, ['route', flag, Object.values(who)[0]!]);
      expect(resultSchemaProblem('result-route', r)).toBeNull();
      expect(r).toEqual(asJson(route({knowledge: canaryTree, ...who})));
    }
    expect(must(canaryTree, ['route'])).toEqual(asJson(route({knowledge: canaryTree})));
  });

  it(
    'sends about half the users to the 50% canary, each always ' + 'the same way, and the router answers as route does',
    () => {
      const router = openRouter({knowledge: canaryTree});
      const states = users.map((user) => {
        const r = route({knowledge: canaryTree, user});
        expect(resultSchemaProblem('result-route', asJson(r))).toBeNull();
        const {status: _s, active_source: _a, registry_problem: _p, ...decision} = r;
        expect(router.route({user})).toEqual(decision);
        expect(route({knowledge: canaryTree, user}).state).toBe(r.state);
        return r.state;
      });
      const canary = states.filter((s) => s === 'CANARY').length;
      expect(canary).toBeGreaterThan(8);
      expect(canary).toBeLessThan(32);
      expect(route({knowledge: canaryTree})).toMatchObject({
        state: 'ACTIVE',
        version: 'v1',
        reason: 'no_requester',
        requester: null,
      });
      expect(route({knowledge: canaryTree, session: 's-1'}).requester).toBe('session');
      expect(route({knowledge: canaryTree, event: 'e-1'}).requester).toBe('event');
    },
  );

  it('narrows a canary to its tenants and resource families', async () => {
    const k = copy('filters');
    await releaseTransition({
      knowledge: k,
      version: 'v2',
      to: 'CANARY',
      canaryBasisPoints: 10_000,
      canaryTenants: ['acme'],
      canaryResourceFamilies: ['repo:acme/'],
      rationale: 'acme only',
    });
    expect(route({knowledge: k, user: 'u', tenant: 'acme', resourceAddress: 'repo:acme/api'}).state).toBe('CANARY');
    expect(route({knowledge: k, user: 'u', tenant: 'acme', resourceId: 'repo:acme/'}).state).toBe('CANARY');
    expect(route({knowledge: k, user: 'u', tenant: 'globex', resourceAddress: 'repo:acme/api'}).reason).toBe(
      'tenant_filtered',
    );
    expect(route({knowledge: k, user: 'u', resourceAddress: 'repo:acme/api'}).reason).toBe('tenant_filtered');
    expect(route({knowledge: k, user: 'u', tenant: 'acme', resourceAddress: 'repo:globex/api'}).reason).toBe(
      'resource_filtered',
    );
    // The flags reach the same request: --tenant and --resource-address.
    expect(must(k, ['route', '--user', 'u', '--tenant', 'acme', '--resource-address', 'repo:acme/api']).state).toBe(
      'CANARY',
    );
    expect(must(k, ['route', '--user', 'u', '--tenant', 'acme', '--resource-id', 'repo:globex/']).reason).toBe(
      'resource_filtered',
    );
  });

  it(
    'falls back to ACTIVE from a canary this deployment cannot run, and ' +
      "tells the router's reporter once per version, after the decision",
    async () => {
      const k = copy('runnable');
      await releaseTransition({knowledge: k, version: 'v2', to: 'CANARY', canaryBasisPoints: 10_000, rationale: 'all'});
      await releaseRunnable({knowledge: k, versions: ['v1'], rationale: 'this build runs v1 only'});
      expect(route({knowledge: k, user: 'u'})).toMatchObject({
        state: 'ACTIVE',
        version: 'v1',
        reason: 'not_runnable',
        not_runnable: ['v2'],
      });
      const told: string[] = [];
      const router = openRouter({knowledge: k, onNotRunnable: (v) => told.push(v)});
      for (const user of users) expect(router.route({user}).state).toBe('ACTIVE');
      expect(told).toEqual([]); // not in the decision path: told later
      await new Promise((resolve) => setImmediate(resolve));
      expect(told).toEqual(['v2']);
    },
  );

  it(
    'looks again at most a second after its snapshot: a rollback ' + 'of the canary reaches a long-running router',
    async () => {
      const k = copy('fresh');
      let now = 1_000_000;
      const router = openRouter({knowledge: k, clock: () => now});
      const inCanary = users.find((user) => router.route({user}).state === 'CANARY')!;
      await releaseTransition({knowledge: k, version: 'v2', to: 'DEPRECATED', rationale: 'pull the canary'});
      now += 999;
      expect(router.route({user: inCanary}).state).toBe('CANARY');
      now += 1;
      expect(router.route({user: inCanary})).toMatchObject({state: 'ACTIVE', version: 'v1'});
    },
  );

  it("serves active.json's bundle when the registry does not verify, and says why", () => {
    const k = copy('edited');
    const file = path.join(k, 'demo/context_bundles/releases/registry/global.json');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"basis_points": 5000', '"basis_points": 10000'));
    const r = route({knowledge: k, user: 'u'});
    expect(r).toMatchObject({state: 'ACTIVE', bundle_digest: t.baseline, reason: 'registry_integrity'});
    expect(r.registry_problem).toMatch(/registry/);
  });
});

describe('autoctx shadow sample', () => {
  it('samples by the event id below the share, never past the daily ' +
    'cap under 8 concurrent callers, and prunes old counters', async () => {
    const k = copy('shadow');
    const shadowTree = path.join(tempDir('autoctx-shadow-'), 'knowledge');
    fs.cpSync(k, shadowTree, {recursive: true});
    expect(must(shadowTree, ['shadow', 'sample', '--event', 'e-1'])).toMatchObject({
      status: 'not_sampled',
      reason: 'no_shadow',
    });
    must(shadowTree, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'back to shadow']);
    expect(must(shadowTree, ['shadow', 'sample', '--event', 'e-1'])).toMatchObject({
      status: 'not_sampled',
      reason: 'outside_sample',
      basis_points: 0,
    });
    must(shadowTree, [
      'release',
      'transition',
      'v2',
      '--to',
      'SHADOW',
      '--shadow-percent',
      '100',
      '--shadow-daily-cap',
      '5',
      '--rationale',
      'all, five a day',
    ]);
    const old = path.join(shadowTree, '.state/shadow');
    fs.mkdirSync(old, {recursive: true});
    fs.writeFileSync(path.join(old, `${'0'.repeat(32)}-2026-01-01.json`), '{}');
    const run = (i: number) =>
      new Promise<{code: number | null; out: string}>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            path.join(PROJECT_ROOT, 'bin/run.js'),
            'shadow',
            'sample',
            '--event',
            `evt-${i}`,
            '--consume',
            '--knowledge',
            shadowTree,
            '--json',
          ],
          {stdio: ['ignore', 'pipe', 'pipe']},
        );
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.on('close', (code) => resolve({code, out}));
      });
    const results = await Promise.all(Array.from({length: 8}, (_, i) => run(i)));
    const answers = results.map((r) => {
      expect(r.code).toBe(0);
      const j = JSON.parse(r.out);
      expect(resultSchemaProblem('result-shadow-sample', j)).toBeNull();
      return j;
    });
    expect(answers.filter((x) => x.status === 'sampled')).toHaveLength(5);
    expect(answers.filter((x) => x.reason === 'daily_cap')).toHaveLength(3);
    expect(
      answers
        .filter((x) => x.status === 'sampled')
        .map((x) => x.count)
        .sort(),
    ).toEqual([1, 2, 3, 4, 5]);
    expect(fs.readdirSync(old).filter((f) => f.endsWith('2026-01-01.json'))).toEqual([]);
    // Without --consume the answer reads the count and takes nothing.
    expect(must(shadowTree, ['shadow', 'sample', '--event', 'evt-x'])).toMatchObject({
      status: 'not_sampled',
      reason: 'daily_cap',
      consumed: false,
      count: 5,
    });
    // A SHADOW release this deployment cannot run is skipped.
    must(shadowTree, ['release', 'runnable', 'v1', '--rationale', 'v1 only']);
    expect(must(shadowTree, ['shadow', 'sample', '--event', 'evt-y'])).toMatchObject({
      status: 'not_sampled',
      reason: 'no_shadow',
      skipped: ['v2'],
    });
    expect(cli(shadowTree, ['shadow', 'sample', '--event', '']).status).toBe(2);
  }, 120_000);
});
