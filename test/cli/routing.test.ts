import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {openRouter} from '../../src/public/release.js';
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
  a = t.propose('better', {'playbook/playbook.md': 'Be helpful and precise.\n', 'routing_config/roles.json': '{"model_competitor": "small"}'});
  must(t.knowledge, ['confirm', a, ...evalArgs()], fakeEnv(t.dir));
  must(t.knowledge, ['release', 'name', 'v1', t.baseline]);
  must(t.knowledge, ['release', 'name', 'v2', a]);
  must(t.knowledge, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 's']);
  must(t.knowledge, ['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '50', '--rationale', 'half']);
  canaryTree = t.knowledge;
}, 120_000);

describe('autoctx route and openRouter', () => {
  it('sends about half the users to the 50% canary, each always the same way, and the router answers as the command does', () => {
    const router = openRouter({knowledge: canaryTree});
    const states = users.map((user) => {
      const r = must(canaryTree, ['route', '--user', user]);
      expect(resultSchemaProblem('result-route', r)).toBeNull();
      const {status: _s, active_source: _a, registry_problem: _p, ...decision} = r;
      expect(router.route({user})).toEqual(decision);
      expect(must(canaryTree, ['route', '--user', user]).state).toBe(r.state);
      return r.state;
    });
    const canary = states.filter((s) => s === 'CANARY').length;
    expect(canary).toBeGreaterThan(8);
    expect(canary).toBeLessThan(32);
    expect(must(canaryTree, ['route'])).toMatchObject({state: 'ACTIVE', version: 'v1', reason: 'no_requester', requester: null});
    expect(must(canaryTree, ['route', '--session', 's-1']).requester).toBe('session');
    expect(must(canaryTree, ['route', '--event', 'e-1']).requester).toBe('event');
  });

  it('narrows a canary to its tenants and resource families', () => {
    const k = copy('filters');
    must(k, ['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '100', '--canary-tenants', 'acme', '--canary-resource-families', 'repo:acme/', '--rationale', 'acme only']);
    expect(must(k, ['route', '--user', 'u', '--tenant', 'acme', '--resource-address', 'repo:acme/api']).state).toBe('CANARY');
    expect(must(k, ['route', '--user', 'u', '--tenant', 'acme', '--resource-id', 'repo:acme/']).state).toBe('CANARY');
    expect(must(k, ['route', '--user', 'u', '--tenant', 'globex', '--resource-address', 'repo:acme/api']).reason).toBe('tenant_filtered');
    expect(must(k, ['route', '--user', 'u', '--resource-address', 'repo:acme/api']).reason).toBe('tenant_filtered');
    expect(must(k, ['route', '--user', 'u', '--tenant', 'acme', '--resource-address', 'repo:globex/api']).reason).toBe('resource_filtered');
  });

  it('falls back to ACTIVE from a canary this deployment cannot run, and tells the router\'s reporter once per version, after the decision', async () => {
    const k = copy('runnable');
    must(k, ['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '100', '--rationale', 'all']);
    must(k, ['release', 'runnable', 'v1', '--rationale', 'this build runs v1 only']);
    expect(must(k, ['route', '--user', 'u'])).toMatchObject({state: 'ACTIVE', version: 'v1', reason: 'not_runnable', not_runnable: ['v2']});
    const told: string[] = [];
    const router = openRouter({knowledge: k, onNotRunnable: (v) => told.push(v)});
    for (const user of users) expect(router.route({user}).state).toBe('ACTIVE');
    expect(told).toEqual([]); // not in the decision path: told later
    await new Promise((resolve) => setImmediate(resolve));
    expect(told).toEqual(['v2']);
  });

  it('looks again at most a second after its snapshot: a rollback of the canary reaches a long-running router', () => {
    const k = copy('fresh');
    let now = 1_000_000;
    const router = openRouter({knowledge: k, clock: () => now});
    const inCanary = users.find((user) => router.route({user}).state === 'CANARY')!;
    must(k, ['release', 'transition', 'v2', '--to', 'DEPRECATED', '--rationale', 'pull the canary']);
    now += 999;
    expect(router.route({user: inCanary}).state).toBe('CANARY');
    now += 1;
    expect(router.route({user: inCanary})).toMatchObject({state: 'ACTIVE', version: 'v1'});
  });

  it('serves active.json\'s bundle when the registry does not verify, and says why', () => {
    const k = copy('edited');
    const file = path.join(k, 'demo/context_bundles/releases/registry/global.json');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"basis_points": 5000', '"basis_points": 10000'));
    const r = must(k, ['route', '--user', 'u']);
    expect(r).toMatchObject({state: 'ACTIVE', bundle_digest: t.baseline, reason: 'registry_integrity'});
    expect(r.registry_problem).toMatch(/registry/);
  });
});

describe('autoctx shadow sample', () => {
  it('samples by the event id below the share, never past the daily cap under 8 concurrent callers, and prunes old counters', async () => {
    const k = copy('shadow');
    const shadowTree = path.join(tempDir('autoctx-shadow-'), 'knowledge');
    fs.cpSync(k, shadowTree, {recursive: true});
    expect(must(shadowTree, ['shadow', 'sample', '--event', 'e-1'])).toMatchObject({status: 'not_sampled', reason: 'no_shadow'});
    must(shadowTree, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'back to shadow']);
    expect(must(shadowTree, ['shadow', 'sample', '--event', 'e-1'])).toMatchObject({status: 'not_sampled', reason: 'outside_sample', basis_points: 0});
    must(shadowTree, ['release', 'transition', 'v2', '--to', 'SHADOW', '--shadow-percent', '100', '--shadow-daily-cap', '5', '--rationale', 'all, five a day']);
    const old = path.join(shadowTree, '.state/shadow');
    fs.mkdirSync(old, {recursive: true});
    fs.writeFileSync(path.join(old, `${'0'.repeat(32)}-2026-01-01.json`), '{}');
    const run = (i: number) =>
      new Promise<{code: number | null; out: string}>((resolve) => {
        const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/run.js'), 'shadow', 'sample', '--event', `evt-${i}`, '--consume', '--knowledge', shadowTree, '--json'], {stdio: ['ignore', 'pipe', 'pipe']});
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
    expect(answers.filter((x) => x.status === 'sampled').map((x) => x.count).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(fs.readdirSync(old).filter((f) => f.endsWith('2026-01-01.json'))).toEqual([]);
    // Without --consume the answer reads the count and takes nothing.
    expect(must(shadowTree, ['shadow', 'sample', '--event', 'evt-x'])).toMatchObject({status: 'not_sampled', reason: 'daily_cap', consumed: false, count: 5});
    // A SHADOW release this deployment cannot run is skipped.
    must(shadowTree, ['release', 'runnable', 'v1', '--rationale', 'v1 only']);
    expect(must(shadowTree, ['shadow', 'sample', '--event', 'evt-y'])).toMatchObject({status: 'not_sampled', reason: 'no_shadow', skipped: ['v2']});
    expect(cli(shadowTree, ['shadow', 'sample', '--event', '']).status).toBe(2);
  }, 120_000);
});
