import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {AUDIT, calls, evalArgs, fakeEnv, useTrees, type Tree} from '../helpers/pipeline.js';
import {treeHash, writeSource} from '../helpers/tree.js';

const tree = useTrees();
const CANDIDATE = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};

describe('confirm: the coordinator loop', () => {
  it('runs adaptive pairs in plan order with alternating arm order, candidate first on the first screen unit', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const r = t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir));
    expect(r.status).toBe(0);
    expect(resultSchemaProblem('result-confirm', r.json)).toBeNull();
    expect(r.json).toMatchObject({status: 'confirmed', lifecycle: 'confirmed', comparison: {decision: 'confirmed'}});
    const log = calls(t.dir);
    expect(log[0]).toMatch(/^candidate screen /);
    const plan = JSON.parse(t.read(`candidates/${c}/evaluator_plan.json`)).plan;
    const indexOf = new Map(
      plan.units.map((u: {fixture: string; seed: number}, i: number) => [`${u.fixture} ${u.seed}`, i]),
    );
    const pairs = r.json.pairs_evaluated as number;
    expect(log).toHaveLength(2 * pairs);
    // Stopped early: fewer pairs than the plan holds; lanes in order screen, confirmation, held-out.
    expect(pairs).toBeLessThan(plan.units.length);
    const lanes = log.filter((_, i) => i % 2 === 0).map((l) => l.split(' ')[1]);
    const order = (x: string | undefined) => ['screen', 'confirmation', 'heldout'].indexOf(x ?? '');
    expect(lanes).toEqual([...lanes].sort((a, b) => order(a) - order(b)));
    for (let k = 0; k < pairs; k++) {
      const [arm1, lane, fixture, seed] = log[2 * k]!.split(' ');
      const [arm2, , fixture2, seed2] = log[2 * k + 1]!.split(' ');
      expect([fixture2, seed2]).toEqual([fixture, seed]);
      expect(arm1).not.toBe(arm2);
      const index = indexOf.get(`${fixture} ${seed}`) as number;
      expect([lane, index, arm1]).toEqual([lane, index, index % 2 === 0 ? 'candidate' : 'incumbent']);
    }
    const envelope = JSON.parse(t.read(`candidates/${c}/matched_trials.json`));
    const stored = envelope.trials.map((x: {lane: string; pair_key: string}) => `${x.lane} ${x.pair_key}`);
    expect(stored).toEqual([...stored].sort());
    expect(stored).toHaveLength(pairs);
    expect(t.cli(['verify']).json).toMatchObject({status: 'ok', errors: []});
  });

  it('stops after a failed screen with one pair and a negative result bound to the bundle, epoch and cohort', () => {
    const t = tree();
    const c = t.propose('worse', {'playbook/playbook.md': 'Be terse.\n'});
    const active = t.read('active.json');
    const r = t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir, {FAKE_DELTA: '-0.2'}));
    expect(r.status).toBe(3);
    expect(r.json).toMatchObject({
      status: 'rejected',
      lifecycle: 'rejected',
      comparison: {decision: 'rejected', reason: 'candidate failed the cheap matched screen', screen_pairs: 1},
    });
    expect(calls(t.dir)).toHaveLength(2);
    const negative = JSON.parse(t.read(`candidates/${c}/negative_result.json`));
    expect(negative.entries[0]).toMatchObject({
      result_id: `context-bundle-${c}-rejected`,
      failure_kind: 'score_regression',
      context: {
        context_bundle_digest: c,
        evaluator_epoch: 'epoch-1',
        trial_cohort: 'cand:epoch-1:generation:0'.replace('cand', 'worse'),
        scenario_name: 'demo',
      },
    });
    expect(negative.entries[0].evidence_refs[0].uri).toMatch(
      new RegExp(`^demo/context_bundles/candidates/${c}/matched_trials.json#sha256=[0-9a-f]{64}$`),
    );
    expect(
      fs.readFileSync(path.join(t.knowledge, `demo/negative_result_ledgers/context-bundle-${c}.json`), 'utf8'),
    ).toBe(t.read(`candidates/${c}/negative_result.json`));
    expect(t.read('active.json')).toBe(active);
    // Running it again changes nothing and evaluates nothing.
    const before = treeHash(t.knowledge);
    expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).status).toBe(3);
    expect(treeHash(t.knowledge)).toBe(before);
    expect(calls(t.dir)).toHaveLength(2);
  });

  it('an exhausted budget is inconclusive: terminal, rejected, the inconclusive_gate audit runs', () => {
    const t = tree();
    const c = t.propose('tie', CANDIDATE);
    const auditLog = path.join(t.dir, 'audit.log');
    const r = t.cli(
      ['confirm', c, ...evalArgs(['--audit', `node ${AUDIT}`])],
      fakeEnv(t.dir, {
        FAKE_DELTA: 'by-lane:0.3,0.1,0.3',
        FAKE_NOISE: '0',
        FAKE_ALTERNATE: '1',
        FAKE_AUDIT_LOG: auditLog,
      }),
    );
    expect(r.status).toBe(3);
    expect(r.json.status).toBe('inconclusive');
    expect(r.json.lifecycle).toBe('rejected');
    const record = JSON.parse(t.read(`candidates/${c}/record.json`));
    expect(record.rationale).toBe(`terminal inconclusive evaluation: ${r.json.comparison.reason}`);
    expect(fs.readFileSync(auditLog, 'utf8')).toContain('inconclusive_gate');
    expect(JSON.parse(t.read(`candidates/${c}/negative_result.json`)).entries[0].result_id).toBe(
      `context-bundle-${c}-inconclusive`,
    );
  });

  it('the policy cannot change once evidence exists', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    expect(t.cli(['screen', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('screened');
    const policy = path.join(t.dir, 'other-policy.json');
    fs.writeFileSync(
      policy,
      JSON.stringify({min_screen_pairs: 1, min_confirmation_pairs: 2, max_confirmation_pairs: 5, min_heldout_pairs: 1}),
    );
    const before = treeHash(t.knowledge);
    const r = t.cli(
      [
        'confirm',
        c,
        ...evalArgs().filter((a, i, all) => a !== '--policy' && all[i - 1] !== '--policy'),
        '--policy',
        policy,
      ],
      fakeEnv(t.dir),
    );
    expect(r.json.error.code).toBe('POLICY_MISMATCH');
    expect(r.status).toBe(2);
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it('evidence first, then the record: a record that lags its evidence is recovered without new evaluations', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    expect(t.cli(['screen', c, ...evalArgs()], fakeEnv(t.dir)).status).toBe(0);
    const recordFile = t.file(`candidates/${c}/record.json`);
    const screened = fs.readFileSync(recordFile, 'utf8');
    // As if the process died after writing the envelope and before the record.
    const stale = {
      ...JSON.parse(screened),
      lifecycle: 'proposed',
      comparison: null,
      confirmation_policy: null,
      confirmation_policy_digest: null,
    };
    fs.writeFileSync(recordFile, JSON.stringify(stale));
    const n = calls(t.dir).length;
    expect(t.cli(['screen', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('screened');
    expect(calls(t.dir)).toHaveLength(n);
    expect(JSON.parse(fs.readFileSync(recordFile, 'utf8'))).toMatchObject({
      lifecycle: 'screened',
      comparison: JSON.parse(screened).comparison,
    });
  });

  it('resumes after an evaluator failure without re-evaluating recorded pairs; the failed pair is not recorded', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const audits = path.join(t.dir, 'audit.log');
    const failed = t.cli(
      ['confirm', c, ...evalArgs(['--audit', `node ${AUDIT}`], false)],
      fakeEnv(t.dir, {FAKE_FAIL_AT: '5', FAKE_AUDIT_LOG: audits}),
    );
    expect(failed.status).toBe(8);
    expect(failed.json.error.code).toBe('EVALUATOR_FAILED');
    expect(fs.readFileSync(audits, 'utf8')).toContain('integrity_alert');
    expect(JSON.parse(t.read(`candidates/${c}/matched_trials.json`)).trials).toHaveLength(2);
    const first = calls(t.dir);
    const again = t.cli(['confirm', c, ...evalArgs([], false)], fakeEnv(t.dir));
    expect(again.json.status).toBe('confirmed');
    const all = calls(t.dir);
    const units = (lines: string[]) => lines.map((l) => l.split(' ').slice(1).join(' '));
    // The two recorded pairs (4 calls) were not evaluated again; the failed pair was, from scratch.
    expect(units(all.slice(first.length))).not.toContain(units(first)[0]);
    expect(units(all.slice(first.length))).not.toContain(units(first)[2]);
    expect(units(all.slice(first.length))[0]).toBe(units(first)[4]);
  });

  it.each([
    ['a wrong attestation', {FAKE_MODE: 'lie'}],
    ['a non-numeric score', {FAKE_MODE: 'nan'}],
    ['output that is not one answer', {FAKE_MODE: 'extra'}],
  ])('%s is an integrity failure: exit 8 and nothing recorded for the pair', (_name, env) => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const r = t.cli(['confirm', c, ...evalArgs([], false)], fakeEnv(t.dir, env));
    expect(r.status).toBe(8);
    expect(r.json.error.code).toBe('EVALUATOR_FAILED');
    expect(fs.existsSync(t.file(`candidates/${c}/matched_trials.json`))).toBe(false);
    expect(JSON.parse(t.read(`candidates/${c}/record.json`)).lifecycle).toBe('proposed');
  });

  it('a timeout is an integrity failure', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const r = t.cli(['confirm', c, ...evalArgs(['--timeout', '0.5'], false)], fakeEnv(t.dir, {FAKE_MODE: 'sleep'}));
    expect(r.status).toBe(8);
    expect(r.json.error.message).toMatch(/timed out/);
  });

  it('another evaluator for a bound plan fails closed before any arm (exit 8)', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    t.cli(['screen', c, ...evalArgs()], fakeEnv(t.dir));
    const n = calls(t.dir).length;
    const r = t.cli(['confirm', c, ...evalArgs(['--evaluator-version', 'v2'])], fakeEnv(t.dir));
    expect(r.status).toBe(8);
    expect(r.json.error.code).toBe('EVALUATOR_CHANGED');
    expect(calls(t.dir)).toHaveLength(n);
  });

  it('a plan that cannot reach a decision is refused before anything is bound (exit 2, lane deficits named)', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const few = path.join(t.dir, 'few.jsonl');
    fs.writeFileSync(
      few,
      '{"fixture":"a","initial_state":1,"observation":1}\n{"fixture":"b","initial_state":2,"observation":2}\n',
    );
    const before = treeHash(t.knowledge);
    const r = t.cli(['confirm', c, '--evaluator', 'true', '--fixtures', few, '--quiet']);
    expect(r.status).toBe(2);
    expect(r.json.error.code).toBe('PLAN_UNREACHABLE');
    expect(r.json.error.message).toMatch(/confirmation lacks 20/);
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it('with --concurrency 4 the decision and the recorded evidence equal those of --concurrency 1', () => {
    const a = tree();
    const b = tree();
    const ca = a.propose('cand', CANDIDATE);
    const cb = b.propose('cand', CANDIDATE);
    expect(ca).toBe(cb);
    const env = {FAKE_DELTA: 'by-lane:0.2,0.05,0.2', FAKE_NOISE: '0.15'};
    const ra = a.cli(['confirm', ca, ...evalArgs(['--concurrency', '1'])], fakeEnv(a.dir, env));
    const rb = b.cli(['confirm', cb, ...evalArgs(['--concurrency', '4'])], fakeEnv(b.dir, env));
    expect(rb.json.comparison).toEqual(ra.json.comparison);
    expect(b.read(`candidates/${cb}/matched_trials.json`)).toBe(a.read(`candidates/${ca}/matched_trials.json`));
  });

  it('screen stops after the screen lane', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const r = t.cli(['screen', c, ...evalArgs()], fakeEnv(t.dir));
    expect(r.status).toBe(0);
    expect(resultSchemaProblem('result-screen', r.json)).toBeNull();
    expect(r.json).toMatchObject({
      status: 'screened',
      lifecycle: 'screened',
      comparison: {screen_pairs: 1, confirmation_pairs: 0},
    });
  });
});
