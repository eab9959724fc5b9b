import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {prettyJson} from '../../src/canonical/index.js';
import {
  confirmationPolicyDigest,
  DEFAULT_CONFIRMATION_POLICY,
  validateConfirmationPolicy,
} from '../../src/model/evaluation/policy.js';
import {createMatchedTrial, sortEvidence, type MatchedTrial} from '../../src/model/evaluation/trial.js';
import {evalArgs, fakeEnv, FIXTURES_12, POLICY_SMALL, useTrees, type Tree} from '../helpers/pipeline.js';
import {treeHash} from '../helpers/tree.js';

// A trial is accepted only if it is what a run of the bound plan records.
const tree = useTrees();
const CANDIDATE = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const policy = validateConfirmationPolicy({
  ...DEFAULT_CONFIRMATION_POLICY,
  ...JSON.parse(fs.readFileSync(POLICY_SMALL, 'utf8')),
});

/** Write matched_trials.json as autoctx would, with valid pair keys, sorted, with the policy and its digest. */
function writeEvidence(t: Tree, c: string, trials: MatchedTrial[]): void {
  fs.writeFileSync(
    t.file(`candidates/${c}/matched_trials.json`),
    prettyJson({
      schema_version: 2,
      trials: sortEvidence(trials),
      confirmation_policy: policy,
      confirmation_policy_digest: confirmationPolicyDigest(policy),
    }),
  );
}

/** A made-up trial: a clear win for the candidate, for a fixture digest and seed of our choosing. */
function madeUp(
  t: Tree,
  c: string,
  fixtureDigest: string,
  seed: number,
  lane: 'screen' | 'confirmation' | 'heldout',
  fixture = `made-up-${seed}`,
  cohort?: string,
): MatchedTrial {
  const record = JSON.parse(t.read(`candidates/${c}/record.json`));
  return createMatchedTrial({
    candidate_digest: c,
    incumbent_digest: t.baseline,
    evaluator_epoch: record.evaluator_epoch,
    cohort: cohort ?? `manual:${record.evaluator_epoch}:generation:0`,
    fixture,
    fixture_digest: fixtureDigest,
    seed,
    lane,
    candidate_score: 0.9,
    incumbent_score: 0.1,
  });
}

const errorsOf = (t: Tree) => {
  const r = t.cli(['verify']);
  return {
    status: r.status,
    errors: (r.json.errors as Array<{code: string; file: string}>).map((e) => [e.code, path.basename(e.file)]),
  };
};

describe('evidence is bound to its plan, wherever it is read', () => {
  it(
    'ten trials with made-up fixtures for a candidate never evaluated: ' +
      'verify names the missing plan, repair derives nothing, promote refuses',
    () => {
      const t = tree();
      const c = t.propose('never-evaluated', CANDIDATE);
      const lanes = [
        'screen',
        'confirmation',
        'confirmation',
        'confirmation',
        'confirmation',
        'confirmation',
        'confirmation',
        'heldout',
        'heldout',
        'heldout',
      ] as const;
      writeEvidence(
        t,
        c,
        lanes.map((lane, i) => madeUp(t, c, `f${'0'.repeat(62)}${i}`, i, lane)),
      );
      expect(errorsOf(t)).toEqual({
        status: 8,
        errors: [
          ['MISSING_PLAN', 'matched_trials.json'],
          ['MISSING_PLAN', 'evaluator_plan.json'],
        ],
      });
      const before = treeHash(t.knowledge);
      const repair = t.cli(['repair']);
      expect(repair.status).toBe(0);
      expect(repair.json.remaining).toEqual([
        expect.stringContaining(
          'has matched trials but no evaluator_plan.json they were recorded under; left as it is',
        ),
      ]);
      expect(treeHash(t.knowledge)).toBe(before);
      expect(JSON.parse(t.read(`candidates/${c}/record.json`)).lifecycle).toBe('proposed');
      const promote = t.cli(['promote', c]);
      expect([promote.status, promote.json.error.code]).toEqual([2, 'NOT_CONFIRMED']);
      expect(treeHash(t.knowledge)).toBe(before);
    },
  );

  it(
    'made-up trials beside a bound plan (plan export, nothing evaluated): ' +
      'verify names both files, confirm and trials ingest refuse to go on',
    () => {
      const t = tree();
      const c = t.propose('exported', CANDIDATE);
      expect(
        t.cli([
          'plan',
          'export',
          c,
          '--engine',
          'e',
          '--fixtures',
          FIXTURES_12,
          '--policy',
          POLICY_SMALL,
          '--out',
          path.join(t.dir, 'u.jsonl'),
        ]).status,
      ).toBe(0);
      writeEvidence(t, c, [madeUp(t, c, `f${'0'.repeat(63)}`, 0, 'screen')]);
      const v = errorsOf(t);
      expect(v.status).toBe(8);
      expect(v.errors).toEqual(
        expect.arrayContaining([
          ['TRIAL_NOT_PLANNED', 'matched_trials.json'],
          ['TRIAL_NOT_PLANNED', 'evaluator_plan.json'],
        ]),
      );
      const results = path.join(t.dir, 'none.jsonl');
      fs.writeFileSync(results, '');
      const ingest = t.cli(['trials', 'ingest', c, results]);
      expect([ingest.status, ingest.json.error.code]).toEqual([8, 'INTEGRITY']);
      expect(ingest.json.error.message).toContain('is not a unit of the bound plan');
    },
  );

  it('a unit recorded past a missing one of its lane breaks plan order: verify reports it', () => {
    const t = tree();
    const c = t.propose('out-of-order', CANDIDATE);
    t.cli([
      'plan',
      'export',
      c,
      '--engine',
      'e',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--out',
      path.join(t.dir, 'u.jsonl'),
    ]);
    const plan = JSON.parse(t.read(`candidates/${c}/evaluator_plan.json`)).plan;
    const screen = plan.units.filter((u: {lane: string}) => u.lane === 'screen');
    const confirmation = plan.units.filter((u: {lane: string}) => u.lane === 'confirmation');
    expect(confirmation.length).toBeGreaterThanOrEqual(2);
    // The screen unit, then the second confirmation unit without the first.
    writeEvidence(
      t,
      c,
      [screen[0], confirmation[1]].map(
        (u: {fixture: string; fixture_digest: string; seed: number; lane: 'screen' | 'confirmation'}) =>
          madeUp(t, c, u.fixture_digest, u.seed, u.lane, u.fixture, plan.cohort),
      ),
    );
    const r = t.cli(['verify']);
    expect(r.status).toBe(8);
    expect(r.json.errors.map((e: {message: string}) => e.message).join('\n')).toMatch(
      /runs record their lane's units in plan order/,
    );
  });

  it(
    'trials for fixtures outside the plan appended to a sealed, confirmed ' +
      'run: verify reports them, repair does not seal them, promote refuses',
    () => {
      const t = tree();
      const c = t.propose('cand', CANDIDATE);
      expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('confirmed');
      const file = t.file(`candidates/${c}/matched_trials.json`);
      const recorded = JSON.parse(fs.readFileSync(file, 'utf8')).trials as MatchedTrial[];
      writeEvidence(t, c, [
        ...recorded,
        madeUp(t, c, `a${'0'.repeat(63)}`, 99, 'heldout', 'extra', recorded[0]!.cohort),
      ]);
      const v = t.cli(['verify']);
      expect(v.status).toBe(8);
      // The decided record no longer replays either; the unplanned trial is named as such.
      expect(v.json.errors.map((e: {code: string; file: string}) => [e.code, path.basename(e.file)])).toEqual(
        expect.arrayContaining([
          ['TRIAL_NOT_PLANNED', 'matched_trials.json'],
          ['TRIAL_NOT_PLANNED', 'evaluator_plan.json'],
        ]),
      );
      expect(v.json.warnings.map((w: {code: string}) => w.code)).toContain('UNSEALED_TRIALS');
      const sealBefore = fs.readFileSync(t.file(`candidates/${c}/evidence_seal.json`));
      const repair = t.cli(['repair']);
      expect(repair.json.remaining).toEqual([expect.stringContaining('is not a unit of the bound plan')]);
      expect(fs.readFileSync(t.file(`candidates/${c}/evidence_seal.json`)).equals(sealBefore)).toBe(true);
      const before = treeHash(t.knowledge);
      const promote = t.cli(['promote', c]);
      expect([promote.status, promote.json.error.code]).toEqual([8, 'INTEGRITY']);
      expect(promote.json.error.message).toContain('is not a unit of the bound plan');
      expect(treeHash(t.knowledge)).toBe(before);
    },
  );

  it(
    'one score of a sealed run edited: repair keeps the recorded decision, ' +
      'promote and trials ingest refuse (they checked no seal before)',
    () => {
      const t = tree();
      const c = t.propose('cand', CANDIDATE);
      expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('confirmed');
      const recordBefore = t.read(`candidates/${c}/record.json`);
      const file = t.file(`candidates/${c}/matched_trials.json`);
      const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
      // Lower one candidate score far enough that the replayed decision changes.
      doc.trials[0].candidate_score = -5;
      fs.writeFileSync(file, prettyJson(doc));
      const before = treeHash(t.knowledge);
      const repair = t.cli(['repair']);
      expect(repair.json.remaining).toEqual([
        expect.stringContaining('(1 changed, 0 missing): the evidence was edited; left as it is'),
      ]);
      expect(t.read(`candidates/${c}/record.json`)).toBe(recordBefore);
      expect(treeHash(t.knowledge)).toBe(before);
      const promote = t.cli(['promote', c]);
      expect([promote.status, promote.json.error.code]).toEqual([8, 'INTEGRITY']);
      const results = path.join(t.dir, 'none.jsonl');
      fs.writeFileSync(results, '');
      const ingest = t.cli(['trials', 'ingest', c, results]);
      expect([ingest.status, ingest.json.error.code]).toEqual([8, 'INTEGRITY']);
      expect(ingest.json.error.message).toContain('differ from evidence_seal.json');
      expect(treeHash(t.knowledge)).toBe(before);
    },
  );
});
