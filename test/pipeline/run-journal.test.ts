import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {verify} from '../../src/core/common/verify.js';
import {evaluateMatchedTrials, RunningComparison} from '../../src/model/evaluation/comparison.js';
import {createMatchedTrial, type MatchedTrial} from '../../src/model/evaluation/trial.js';
import {runCli} from '../helpers/cli.js';
import {calls, evalArgs, fakeEnv, useTrees, type Tree} from '../helpers/pipeline.js';

// Each pair goes to an append-only, flushed journal in the state area, folded into the
// envelope (then the seal, then the record) at lane boundaries, at the end and on resume.
const B = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const tree = useTrees();

/** The journal of a candidate's run, and the trace of every durable write of one uninterrupted confirm. */
const journalOf = (t: Tree, b: string) => path.join(t.knowledge, '.state/runs/demo', `${b}.jsonl`);
const envelope = (t: Tree, b: string) => t.read(`candidates/${b}/matched_trials.json`);
const errors = (t: Tree) => verify({knowledge: t.knowledge}).errors.map((e) => `${e.code} ${e.file}`);

/** Confirm killed right after the n-th pair of its confirmation lane was appended to the journal. */
function interrupted(t: Tree, b: string, nth: number): void {
  const trace = path.join(t.dir, 'trace');
  const probe = path.join(t.dir, 'probe');
  fs.cpSync(t.knowledge, probe, {recursive: true});
  const dry = runCli(['confirm', b, ...evalArgs(), '--knowledge', probe, '--json'], {
    env: {...fakeEnv(t.dir), AUTOCTX_FAULT_TRACE: trace},
  });
  expect(dry.status).toBe(0);
  fs.rmSync(probe, {recursive: true});
  fs.rmSync(path.join(t.dir, 'calls.log'), {force: true});
  const lines = fs.readFileSync(trace, 'utf8').trim().split('\n');
  // The appends after the first fold (the screen lane's envelope) are the confirmation lane's.
  const firstFold = lines.findIndex((l) => l.endsWith('after matched_trials.json'));
  const appends = lines.slice(firstFold).filter((l) => l.endsWith(`after ${b}.jsonl`));
  const point = appends[nth - 1]!.split(' ')[0]!;
  const killed = t.cli(['confirm', b, ...evalArgs()], {...fakeEnv(t.dir), AUTOCTX_FAULT: point});
  expect(killed.status).not.toBe(0);
}

describe('the run journal', () => {
  it(
    'a run killed mid-lane leaves its pairs in the journal, the ' +
      'tree verifies, and the resumed run equals an uninterrupted one',
    () => {
      const t = tree();
      const b = t.propose('b', B);
      const whole = tree();
      const wb = whole.propose('b', B);
      expect(wb).toBe(b);
      expect(whole.cli(['confirm', wb, ...evalArgs()], fakeEnv(whole.dir)).json.status).toBe('confirmed');

      interrupted(t, b, 2);
      const journal = fs.readFileSync(journalOf(t, b), 'utf8').trim().split('\n');
      expect(journal).toHaveLength(3); // the header and two confirmation pairs
      expect(JSON.parse(envelope(t, b)).trials).toHaveLength(1); // only the screen lane is evidence yet
      expect(errors(t)).toEqual([]);
      const evaluatedBefore = calls(t.dir).length;

      const resumed = t.cli(['confirm', b, ...evalArgs()], fakeEnv(t.dir));
      expect(resumed.json.status).toBe('confirmed');
      // The journaled pairs were not evaluated again.
      expect(resumed.json.pairs_evaluated).toBe(JSON.parse(envelope(whole, wb)).trials.length - 3);
      expect(calls(t.dir).length - evaluatedBefore).toBe(2 * resumed.json.pairs_evaluated);
      expect(envelope(t, b)).toBe(envelope(whole, wb));
      expect(t.read(`candidates/${b}/evidence_seal.json`)).toBe(whole.read(`candidates/${wb}/evidence_seal.json`));
      expect(fs.existsSync(journalOf(t, b))).toBe(false);
      expect(errors(t)).toEqual([]);
    },
  );

  it.each([
    ['a last line cut short (the pair is evaluated again)', (text: string) => text.slice(0, -20), 1],
    [
      'a line that is not a whole trial (set aside whole)',
      (text: string) => text.replace(/"candidate_score":[0-9.e-]+/, '"candidate_score":"high"'),
      0,
    ],
    [
      'a score edited so the pair key no longer matches its identity (set aside whole)',
      (text: string) => text.replace(/"pair_key":"[0-9a-f]{4}/, '"pair_key":"0000'),
      0,
    ],
    [
      'a header for another plan (set aside whole)',
      (text: string) => text.replace(/"plan_digest":"[0-9a-f]{4}/, '"plan_digest":"ffff'),
      0,
    ],
    ['the journal deleted (safe to lose: its pairs are evaluated again)', () => null, 0],
  ])(
    'a journal with %s: the resumed run keeps only whole, checked pairs and still equals an uninterrupted one',
    (_name, damage: (text: string) => string | null, kept) => {
      const t = tree();
      const b = t.propose('b', B);
      const whole = tree();
      const wb = whole.propose('b', B);
      expect(whole.cli(['confirm', wb, ...evalArgs()], fakeEnv(whole.dir)).json.status).toBe('confirmed');
      interrupted(t, b, 2);
      const damaged = damage(fs.readFileSync(journalOf(t, b), 'utf8'));
      if (damaged === null) fs.rmSync(journalOf(t, b));
      else fs.writeFileSync(journalOf(t, b), damaged);
      expect(errors(t)).toEqual([]);
      const resumed = t.cli(['confirm', b, ...evalArgs()], fakeEnv(t.dir));
      expect(resumed.json.status).toBe('confirmed');
      expect(resumed.json.pairs_evaluated).toBe(JSON.parse(envelope(whole, wb)).trials.length - 1 - kept);
      expect(envelope(t, b)).toBe(envelope(whole, wb));
      expect(errors(t)).toEqual([]);
    },
  );

  it('a candidate rejected while its pairs wait in the journal: the resumed run records none of them', () => {
    const t = tree();
    const b = t.propose('b', B);
    interrupted(t, b, 2);
    expect(t.cli(['reject', b, '--rationale', 'not this one']).status).toBe(0);
    const before = envelope(t, b);
    const resumed = t.cli(['confirm', b, ...evalArgs()], fakeEnv(t.dir));
    expect([resumed.json.status, resumed.json.pairs_evaluated, resumed.json.pairs_recorded]).toEqual([
      'rejected',
      0,
      1,
    ]);
    expect(envelope(t, b)).toBe(before);
    expect(fs.existsSync(journalOf(t, b))).toBe(false);
    expect(errors(t)).toEqual([]);
  });

  it('a run that records nothing creates nothing in the state area', () => {
    const t = tree();
    const b = t.propose('b', B);
    const r = t.cli(['confirm', b, ...evalArgs()], {...fakeEnv(t.dir), FAKE_MODE: 'nan'});
    expect(r.status).toBe(8);
    expect(fs.existsSync(path.join(t.knowledge, '.state/runs'))).toBe(false);
  });
});

describe('the running decision', () => {
  const subject = {digest: 'c'.repeat(64), parent_digest: 'p'.repeat(64), evaluator_epoch: 'e1'};
  const trialArb = fc.record({
    lane: fc.constantFrom('screen', 'confirmation', 'heldout'),
    candidate: fc.double({min: -1, max: 1, noNaN: true}),
    incumbent: fc.double({min: -1, max: 1, noNaN: true}),
    valid: fc.boolean(),
  });
  it('equals evaluateMatchedTrials over every prefix, bit for bit', () => {
    fc.assert(
      fc.property(fc.array(trialArb, {maxLength: 60}), fc.integer({min: 2, max: 30}), (rows, max) => {
        const policy = {
          min_screen_pairs: 2,
          min_confirmation_pairs: 2,
          max_confirmation_pairs: Math.max(2, max),
          min_heldout_pairs: 2,
          min_effect: 0,
          confidence_z: 1.96,
        };
        const trials: MatchedTrial[] = [];
        const running = new RunningComparison(subject, policy);
        rows.forEach((r, i) => {
          const t = createMatchedTrial({
            candidate_digest: subject.digest,
            incumbent_digest: subject.parent_digest,
            evaluator_epoch: 'e1',
            cohort: 'c',
            fixture: `f${i}`,
            fixture_digest: `d${i}`,
            seed: i,
            lane: r.lane as MatchedTrial['lane'],
            candidate_score: r.candidate,
            incumbent_score: r.incumbent,
            candidate_valid: r.valid || i % 3 !== 0,
          });
          trials.push(t);
          const batch = (() => {
            try {
              return evaluateMatchedTrials(subject, trials, policy);
            } catch (error) {
              return (error as Error).message;
            }
          })();
          const incremental = (() => {
            try {
              running.add(t);
              return running.result();
            } catch (error) {
              return (error as Error).message;
            }
          })();
          expect(incremental).toEqual(batch);
        });
        return true;
      }),
      {numRuns: 200},
    );
  });
});
