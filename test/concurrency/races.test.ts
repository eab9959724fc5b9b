import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {verify} from '../../src/core/common/verify.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {runCliProcess} from '../helpers/cli.js';
import {paused, start} from '../helpers/paused-cli.js';
import {racer, type Racer} from '../helpers/racer.js';
import {tempDir, writeSource} from '../helpers/tree.js';

// Concurrent commands never corrupt the tree. Each race is forced with a named pause
// point (AUTOCTX_PAUSE, the process stops itself there until SIGCONT), then run unforced 50 times:
// each time two processes of their own (two racers, test/helpers/racer.ts, started once and running one
// command at a time) on a fresh copy of the tree, started together.
const B = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const dirs: string[] = [];
const counts: string[] = [];
afterAll(() => {
  dirs.forEach((d) => fs.rmSync(d, {recursive: true, force: true}));
  if (counts.length > 0)
    process.stdout.write(`races, unforced (50 runs each):\n${counts.map((c) => `  ${c}`).join('\n')}\n`);
});

const cli = (t: {knowledge: string}, args: string[], env: NodeJS.ProcessEnv = {}) =>
  runCliProcess([...args, '--knowledge', t.knowledge, '--json'], {env});
const record = (t: Tree, d: string) => JSON.parse(t.read(`candidates/${d}/record.json`));
const active = (t: Tree) => JSON.parse(t.read('active.json'));
const clean = (knowledge: string) => verify({knowledge}).errors.map((e) => `${e.code} ${e.file}`);

let base: {tree: Tree; proposed: string; confirmed: string} | undefined;
/** One tree with B proposed (in a copy) and B confirmed, copied for each race. */
function fresh(kind: 'proposed' | 'confirmed'): {t: Tree; b: string} {
  if (!base) {
    const tree = makeTree();
    dirs.push(tree.dir);
    const proposed = tree.propose('b', B);
    fs.cpSync(tree.knowledge, path.join(tree.dir, 'proposed-knowledge'), {recursive: true});
    expect(tree.cli(['confirm', proposed, ...evalArgs()], fakeEnv(tree.dir)).json.status).toBe('confirmed');
    base = {tree, proposed, confirmed: proposed};
  }
  const dir = tempDir('autoctx-race-');
  dirs.push(dir);
  const knowledge = path.join(dir, 'knowledge');
  fs.cpSync(kind === 'confirmed' ? base.tree.knowledge : path.join(base.tree.dir, 'proposed-knowledge'), knowledge, {
    recursive: true,
  });
  const t: Tree = {
    ...base.tree,
    dir,
    knowledge,
    cli: (args, env) => cli({knowledge}, args, env ?? {}),
    file: (rel) => path.join(knowledge, 'demo/context_bundles', rel),
    read: (rel) => fs.readFileSync(path.join(knowledge, 'demo/context_bundles', rel), 'utf8'),
  };
  return {t, b: base.proposed};
}
const confirmArgs = (b: string, dir: string) => ({args: ['confirm', b, ...evalArgs()], env: fakeEnv(dir)});

describe('races, forced with pause points', () => {
  it('reject B while promote B waits on its audit: the promotion ' +
    'is refused, the rejected candidate never serves', async () => {
    const {t, b} = fresh('confirmed');
    const before = active(t);
    const p = await paused(t.knowledge, ['promote', b], 'promote:before-commit');
    expect(cli(t, ['reject', b, '--rationale', 'not this one']).status).toBe(0);
    p.resume();
    const r = await p.done;
    expect([r.status, r.json.error.code]).toEqual([6, 'CAS_LOST']);
    expect(active(t)).toEqual(before);
    expect(record(t, b).lifecycle).toBe('rejected');
    expect(clean(t.knowledge)).toEqual([]);
  }, 60_000);

  it("two promote B at once: the second reports the first's promotion and rejects nothing", async () => {
    const {t, b} = fresh('confirmed');
    const p = await paused(t.knowledge, ['promote', b], 'promote:before-commit');
    expect(cli(t, ['promote', b]).json.status).toBe('promoted');
    p.resume();
    const r = await p.done;
    expect([r.status, r.json.status, r.json.already_promoted]).toEqual([0, 'promoted', true]);
    expect(record(t, b).lifecycle).toBe('active');
    expect(fs.existsSync(t.file(`candidates/${b}/negative_result.json`))).toBe(false);
    expect(fs.readdirSync(t.file('promotions'))).toHaveLength(1);
    expect(clean(t.knowledge)).toEqual([]);
  }, 60_000);

  it('reject B during confirm B: the run records nothing more and reports the candidate rejected', async () => {
    const {t, b} = fresh('proposed');
    const {args, env} = confirmArgs(b, t.dir);
    const c = await paused(t.knowledge, args, 'run:before-commit@3', env);
    expect(cli(t, ['reject', b, '--rationale', 'stop']).status).toBe(0);
    const recorded = JSON.parse(t.read(`candidates/${b}/matched_trials.json`)).trials.length;
    c.resume();
    const r = await c.done;
    expect([r.status, r.json.status, r.json.lifecycle]).toEqual([3, 'rejected', 'rejected']);
    expect(JSON.parse(t.read(`candidates/${b}/matched_trials.json`)).trials.length).toBe(recorded);
    expect(clean(t.knowledge)).toEqual([]);
  }, 60_000);

  it('two confirm B at once: the second waits for the first (exit ' +
    '7 past --lock-timeout), then evaluates nothing again', async () => {
    const {t, b} = fresh('proposed');
    const {args, env} = confirmArgs(b, t.dir);
    const first = await paused(t.knowledge, args, 'run:locked', env);
    const second = cli(t, [...args, '--lock-timeout', '1'], env);
    expect([second.status, second.json.error.code]).toEqual([7, 'LOCKED']);
    first.resume();
    const r = await first.done;
    expect(r.json.status).toBe('confirmed');
    const again = cli(t, args, env);
    expect([again.json.status, again.json.pairs_evaluated, again.json.comparison]).toEqual([
      'confirmed',
      0,
      r.json.comparison,
    ]);
    expect(clean(t.knowledge)).toEqual([]);
  }, 60_000);
});

describe('lock order: scenario, campaign, run, state', () => {
  it('a run claims its run lock only while it holds the scenario lock, and never waits for one under it', async () => {
    const {t, b} = fresh('proposed');
    const {args, env} = confirmArgs(b, t.dir);
    const runLock = t.file(`candidates/${b}/autoctx.lock`);
    // Another command holds the scenario lock: the run must not take its run lock meanwhile.
    const w = writeSource(path.join(t.dir, 'w'), {
      'playbook/playbook.md': 'Be terse.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    const holder = await paused(t.knowledge, ['propose', '--from', w, '--run-id', 'w'], 'scenario:locked');
    const run = start(t.knowledge, args, env);
    await new Promise((r) => setTimeout(r, 1500));
    const claimedUnderAnother = fs.existsSync(runLock);
    holder.resume();
    expect(claimedUnderAnother).toBe(false);
    await holder.done;
    expect((await run.done).json.status).toBe('confirmed');
    // A run that holds its run lock and waits for the scenario lock does not hold up a second
    // run: that one claims nothing while the first holds the run lock, and gives up cleanly.
    const {t: t2, b: b2} = fresh('proposed');
    const first = await paused(t2.knowledge, args, 'run:locked', env);
    const second = cli(t2, [...args, '--lock-timeout', '1'], env);
    const scenarioHeld = fs.existsSync(t2.file('autoctx.lock'));
    first.resume();
    expect([second.status, second.json.error.code, second.json.error.message]).toEqual([
      7,
      'LOCKED',
      expect.stringContaining(`candidate ${b2}'s evaluation run is locked by process ${first.pid}`),
    ]);
    expect(scenarioHeld).toBe(false); // the scenario lock was let go
    expect((await first.done).json.status).toBe('confirmed');
  }, 60_000);
});

describe('races, unforced', () => {
  const RUNS = 50;
  let a: Racer;
  let z: Racer;
  const ran = new Set<number>();
  beforeAll(() => {
    a = racer();
    z = racer();
  });
  afterAll(async () => {
    await Promise.all([a.close(), z.close()]);
    // Every race was run by the two racers, each a process of its own.
    expect([...ran].sort()).toEqual([a.pid, z.pid].sort());
    expect(a.pid).not.toBe(process.pid);
  });
  /** Run on one racer, noting which process answered. */
  const on = async (r: Racer, knowledge: string, args: string[], env: NodeJS.ProcessEnv = {}) => {
    const answer = await r.run(knowledge, args, env);
    expect(answer.pid).toBe(r.pid);
    ran.add(answer.pid);
    return answer;
  };

  it(`reject B against promote B, ${RUNS} times: the tree verifies and says who won`, async () => {
    const tally = {promoted: 0, rejected: 0};
    for (let i = 0; i < RUNS; i++) {
      const {t, b} = fresh('confirmed');
      const [pr, jr] = await Promise.all([
        on(a, t.knowledge, ['promote', b]),
        on(z, t.knowledge, ['reject', b, '--rationale', 'race']),
      ]);
      expect(clean(t.knowledge)).toEqual([]);
      const lifecycle = record(t, b).lifecycle;
      if (lifecycle === 'active') {
        expect([pr.status, jr.status, active(t).bundle_digest]).toEqual([0, 2, b]);
        tally.promoted++;
      } else {
        expect([lifecycle, jr.status, active(t).bundle_digest === b]).toEqual(['rejected', 0, false]);
        // The documented answers of a promotion that lost to a rejection: never INTEGRITY on a consistent tree.
        expect([
          [6, 'CAS_LOST'],
          [2, 'NOT_CONFIRMED'],
        ]).toContainEqual([pr.status, pr.json?.error?.code]);
        tally.rejected++;
      }
    }
    counts.push(`reject vs promote: promote won ${tally.promoted}, reject won ${tally.rejected}`);
  }, 600_000);

  it(`two promote B, ${RUNS} times: one promotion, nothing rejected`, async () => {
    let already = 0;
    for (let i = 0; i < RUNS; i++) {
      const {t, b} = fresh('confirmed');
      const rs = await Promise.all([on(a, t.knowledge, ['promote', b]), on(z, t.knowledge, ['promote', b])]);
      expect(rs.map((r) => [r.status, r.json.status])).toEqual([
        [0, 'promoted'],
        [0, 'promoted'],
      ]);
      already += rs.filter((r) => r.json.already_promoted).length;
      expect([
        record(t, b).lifecycle,
        fs.readdirSync(t.file('promotions')).length,
        fs.existsSync(t.file(`candidates/${b}/negative_result.json`)),
      ]).toEqual(['active', 1, false]);
      expect(clean(t.knowledge)).toEqual([]);
    }
    counts.push(`two promotes: ${already} of ${2 * RUNS} answered "already promoted"`);
  }, 600_000);

  it(`reject B during confirm B, ${RUNS} times: the tree verifies and the run tells the truth`, async () => {
    const tally = {rejectedMidRun: 0, confirmedFirst: 0};
    // The reject starts at ten points spread over an unraced confirm's run in the same racer, the last past its end.
    const unraced = fresh('proposed');
    const began = Date.now();
    const once = confirmArgs(unraced.b, unraced.t.dir);
    const alone = await on(a, unraced.t.knowledge, once.args, once.env);
    expect(alone.json.status).toBe('confirmed');
    const span = Date.now() - began;
    for (let i = 0; i < RUNS; i++) {
      const {t, b} = fresh('proposed');
      const {args, env} = confirmArgs(b, t.dir);
      const c = on(a, t.knowledge, args, env);
      await new Promise((r) => setTimeout(r, Math.round(((i % 10) / 9) * 1.2 * span)));
      const j = on(z, t.knowledge, ['reject', b, '--rationale', 'race']);
      const [cr, jr] = await Promise.all([c, j]);
      expect(clean(t.knowledge)).toEqual([]);
      expect(jr.status).toBe(0);
      expect(record(t, b).lifecycle).toBe('rejected');
      if (cr.json?.status === 'confirmed') tally.confirmedFirst++;
      else {
        expect(cr.json?.status ?? cr.json?.error?.code).toMatch(/rejected|LOCKED/);
        tally.rejectedMidRun++;
      }
    }
    counts.push(
      `reject during confirm (a confirm alone: ${span} ms): confirm finished first ` +
        `${tally.confirmedFirst}, rejected under the run ${tally.rejectedMidRun}`,
    );
  }, 600_000);

  it(`two confirm B, ${RUNS} times: the same decision, every pair evaluated once`, async () => {
    let waited = 0;
    for (let i = 0; i < RUNS; i++) {
      const {t, b} = fresh('proposed');
      const {args, env} = confirmArgs(b, t.dir);
      const log = path.join(t.dir, 'fake.log');
      const rs = await Promise.all([
        on(a, t.knowledge, args, {...env, FAKE_LOG: log}),
        on(z, t.knowledge, args, {...env, FAKE_LOG: log}),
      ]);
      expect(rs.map((r) => r.json.status)).toEqual(['confirmed', 'confirmed']);
      expect(rs[0]!.json.comparison).toEqual(rs[1]!.json.comparison);
      waited += rs.filter((r) => r.json.pairs_evaluated === 0).length;
      const pairs = JSON.parse(t.read(`candidates/${b}/matched_trials.json`)).trials.length;
      // two arms per pair, each pair once
      expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2 * pairs);
      expect(clean(t.knowledge)).toEqual([]);
    }
    counts.push(`two confirms: ${waited} of ${RUNS} second runs found every pair recorded`);
  }, 600_000);
});
