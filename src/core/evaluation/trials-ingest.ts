import {fail} from '../../errors.js';
import {scoreProblem, createMatchedTrial, type MatchedTrial} from '../../model/evaluation/trial.js';
import {readJsonLines} from '../../store/index.js';
import type {StoreOptions} from '../common/store-options.js';
import {drive} from './run/engine.js';
import {prepareRun} from './run/prepare.js';
import type {EvaluateResult} from './run/types.js';
import {
  armObservationOf,
  armObservationProblem,
  pairObserved,
  type ArmObservation,
  type PairObservation,
} from '../../model/evaluation/observations.js';

/** The schema of one result line brought back. */
export const TRIAL_RESULT_SCHEMA = 'autoctx.trial-result.v1';

/** One arm's result: its score, and optionally what the engine observed of it (as an evaluator answer carries). */
interface ArmResult extends ArmObservation {
  score: number;
  valid?: boolean;
}

export interface TrialResultLine {
  schema: string;
  plan_digest: string;
  pair_key: string;
  lane: string;
  fixture: string;
  fixture_digest: string;
  seed: number;
  candidate: ArmResult;
  incumbent: ArmResult;
}

function checkArm(a: unknown, where: string): ArmResult {
  if (a === null || typeof a !== 'object' || Array.isArray(a))
    fail('SCHEMA_VIOLATION', `${where} must be an object {score, valid?}`);
  const r = a as Record<string, unknown>;
  if (typeof r.score !== 'number' || !Number.isFinite(r.score))
    fail('SCHEMA_VIOLATION', `${where}.score must be a finite number`);
  const unrecordable = scoreProblem(r.score);
  if (unrecordable) fail('SCHEMA_VIOLATION', `${where}.score ${unrecordable}`);
  if (r.valid !== undefined && typeof r.valid !== 'boolean')
    fail('SCHEMA_VIOLATION', `${where}.valid must be a boolean`);
  const observed = armObservationProblem(r);
  if (observed) fail('SCHEMA_VIOLATION', `${where} ${observed}`);
  return {score: r.score, ...(r.valid !== undefined ? {valid: r.valid as boolean} : {}), ...armObservationOf(r)};
}

export interface IngestResult extends EvaluateResult {
  ingested: number;
  already_recorded: number;
  discarded: number;
}

/**
 * Take results computed elsewhere: only units of the bound plan, with its
 * plan digest, pair key and attested fixture; applied in plan order under the
 * stopping rule, so the decision equals a sequential local run's. The same
 * results again change nothing; a different result for a recorded pair is
 * refused before anything is written.
 */
export async function ingestTrials(options: StoreOptions & {candidate: string; file: string}): Promise<IngestResult> {
  const run = await prepareRun({...options, mode: 'confirm', request: null});
  try {
    const plan = run.plan.plan;
    const units = new Map(plan.units.map((u) => [`${u.fixture_digest}\u0000${u.seed}`, u]));
    const recorded = new Map(run.trials.map((t) => [`${t.fixture_digest}\u0000${t.seed}`, t]));
    const incoming = new Map<string, MatchedTrial>();
    const observed = new Map<string, PairObservation>();
    let already = 0;
    for (const {line, value} of readJsonLines(options.file)) {
      const where = `${options.file}:${line}`;
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        fail('SCHEMA_VIOLATION', `${where}: a result must be a JSON object`);
      const r = value as unknown as TrialResultLine;
      if (r.schema !== TRIAL_RESULT_SCHEMA)
        fail('SCHEMA_VIOLATION', `${where}: "schema" must be ${TRIAL_RESULT_SCHEMA}`);
      if (r.plan_digest !== run.plan.plan_digest && run.plan.additions.supersedes?.includes(String(r.plan_digest))) {
        fail(
          'INVALID_INPUT',
          `${where}: the result is for plan ${String(r.plan_digest)}, which a rebind superseded; the bound ` +
            `plan is ${run.plan.plan_digest} (export it again and evaluate that)`,
        );
      }
      if (r.plan_digest !== run.plan.plan_digest)
        fail(
          'INVALID_INPUT',
          `${where}: the result is for plan ${String(r.plan_digest)}, not the bound plan ${run.plan.plan_digest}`,
        );
      if (typeof r.seed !== 'number' || !Number.isSafeInteger(r.seed) || typeof r.fixture_digest !== 'string')
        fail('SCHEMA_VIOLATION', `${where}: "fixture_digest" and an integer "seed" are required`);
      const key = `${r.fixture_digest}\u0000${r.seed}`;
      const unit = units.get(key);
      if (!unit)
        fail(
          'INVALID_INPUT',
          `${where}: fixture ${r.fixture_digest} with seed ${r.seed} is not a unit of the bound plan`,
        );
      if (r.lane !== unit.lane || r.fixture !== unit.fixture)
        fail('INVALID_INPUT', `${where}: the unit's lane or fixture name differs from the plan`);
      const candidate = checkArm(r.candidate, `${where}: candidate`);
      const incumbent = checkArm(r.incumbent, `${where}: incumbent`);
      const trial = createMatchedTrial({
        candidate_digest: run.candidate.digest,
        incumbent_digest: run.incumbent.digest,
        evaluator_epoch: run.candidate.evaluator_epoch,
        cohort: plan.cohort,
        fixture: unit.fixture,
        fixture_digest: unit.fixture_digest,
        seed: unit.seed,
        lane: unit.lane,
        candidate_score: candidate.score,
        incumbent_score: incumbent.score,
        candidate_valid: r.candidate.valid ?? true,
        incumbent_valid: r.incumbent.valid ?? true,
      });
      if (r.pair_key !== trial.pair_key) fail('INVALID_INPUT', `${where}: pair_key does not match the unit's identity`);
      const same = (a: MatchedTrial, b: MatchedTrial) =>
        a.candidate_score === b.candidate_score &&
        a.incumbent_score === b.incumbent_score &&
        a.candidate_valid === b.candidate_valid &&
        a.incumbent_valid === b.incumbent_valid;
      const before = recorded.get(key) ?? incoming.get(key);
      if (before && !same(before, trial))
        fail(
          'INGEST_CONFLICT',
          `${where}: a different result for pair ${trial.pair_key} is already ` +
            `${recorded.has(key) ? 'recorded' : 'in this input'}; recorded results never change`,
        );
      if (recorded.has(key)) already++;
      else {
        incoming.set(key, trial);
        const observation = {candidate: armObservationOf({...candidate}), incumbent: armObservationOf({...incumbent})};
        if (pairObserved(observation)) observed.set(key, observation);
      }
    }
    const result = await drive(run, async (unit) => {
      const trial = incoming.get(`${unit.fixture_digest}\u0000${unit.seed}`);
      return trial ? {trial, observation: observed.get(`${unit.fixture_digest}\u0000${unit.seed}`) ?? null} : null;
    });
    const ingested = result.pairs_evaluated;
    return {...result, ingested, already_recorded: already, discarded: incoming.size - ingested};
  } finally {
    await run.release();
  }
}
