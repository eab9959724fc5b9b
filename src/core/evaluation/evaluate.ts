import {AutoctxError, fail} from '../../errors.js';
import {REQUEST_SCHEMA, type EvaluationAnswer, type EvaluationRequest} from '../../evaluator/protocol.js';
import {createEvaluator, type Evaluator} from '../../evaluator/runner.js';
import {isInterruption, onInterrupt, unwindOnInterrupt} from '../../evaluator/run-command.js';
import type {PlanUnit} from '../../model/evaluation/fixtures.js';
import {matchedTrialPairKey, type MatchedTrial} from '../../model/evaluation/trial.js';
import {materializeForEvaluation, type MaterializedBundles} from '../../store/files/materialize.js';
import {evaluatorTimeout, lockTimeout} from '../common/store-options.js';
import {drive, unitTrial, type PairResult} from './run/engine.js';
import {armObservationOf, pairObserved} from '../../model/evaluation/observations.js';
import {prepareRun, type PlanRequest} from './run/prepare.js';
import type {DriveOptions, EvaluateResult, Run} from './run/types.js';
import {planHolds} from '../../store/kinds/evaluation/evaluator-plan.js';
import {knowledgeRootFrom} from '../../store/index.js';
import {
  artifactsProblem,
  chosenArtifactDir,
  prepareArtifactStore,
  type EvaluatorEnvironment,
} from '../../store/files/artifacts.js';

export type {EvaluateResult, EvaluateStatus, ProgressEvent} from './run/types.js';

/** The screen and confirm use case: evaluate a candidate locally with an evaluator command. */
export interface EvaluateOptions extends DriveOptions, Omit<PlanRequest, 'evaluator'> {
  candidate: string;
  evaluator: string;
  evaluatorMode?: 'per-arm' | 'persistent' | 'external' | undefined;
  evaluatorVersion?: string | undefined;
  /** --artifacts: the folder evaluators keep artifacts in (default: the state area's). */
  artifacts?: string | undefined;
}

/** The plan request of evaluation options: the evaluator identity and what the plan is built from. */
export function planRequestOf(options: EvaluateOptions): PlanRequest {
  return {
    evaluator: {
      command: options.evaluator,
      mode: options.evaluatorMode ?? 'per-arm',
      version: options.evaluatorVersion ?? null,
    },
    fixtures: options.fixtures,
    policyFile: options.policyFile,
    seedsPerFixture: options.seedsPerFixture,
    cohort: options.cohort,
    audit: options.audit,
    campaign: options.campaign,
    campaignPolicyFile: options.campaignPolicyFile,
    rebind: options.rebind,
    guardrails: options.guardrails,
  };
}

function request(
  run: Run,
  unit: PlanUnit,
  arm: 'candidate' | 'incumbent',
  pairKey: string,
  bundleDir: string,
): EvaluationRequest {
  const f = run.fixtures.get(unit.fixture_digest)!;
  const bundle = arm === 'candidate' ? run.candidate : run.incumbent;
  return {
    schema: REQUEST_SCHEMA,
    request_id: `${pairKey}:${arm}`,
    arm,
    scenario: run.store.scenario,
    bundle_digest: bundle.digest,
    bundle_dir: bundleDir,
    evaluator_epoch: run.candidate.evaluator_epoch,
    cohort: run.plan.plan.cohort,
    lane: unit.lane,
    fixture: unit.fixture,
    fixture_digest: unit.fixture_digest,
    seed: unit.seed,
    plan_digest: run.plan.plan_digest,
    initial_state: f.initial_state,
    observation: f.observation,
  };
}

/** Both arms of one unit, in alternating order, with the plan re-checked before each arm. */
async function evaluatePair(
  run: Run,
  evaluator: Evaluator,
  unit: PlanUnit,
  index: number,
  bundles: MaterializedBundles,
  env: EvaluatorEnvironment,
): Promise<PairResult> {
  const pairKey = matchedTrialPairKey({
    evaluator_epoch: run.candidate.evaluator_epoch,
    cohort: run.plan.plan.cohort,
    fixture_digest: unit.fixture_digest,
    seed: unit.seed,
  });
  const arms: Array<'candidate' | 'incumbent'> =
    index % 2 === 0 ? ['candidate', 'incumbent'] : ['incumbent', 'candidate'];
  const answers: Record<string, EvaluationAnswer> = {};
  for (const arm of arms) {
    // The bound plan is checked before every arm: its bytes must be those it was bound with.
    if (run.planText === null || !planHolds(run.store, run.candidate.digest, run.planText))
      fail('PLAN_CHANGED', 'evaluator_plan.json changed during evaluation');
    // Each arm gets its own copy of its bundle, and must leave it as it found it.
    const copy = bundles.armCopy(arm === 'candidate' ? run.candidate.digest : run.incumbent.digest);
    try {
      const answer = await evaluator.evaluate(request(run, unit, arm, pairKey, copy.dir));
      const kept = answer.artifacts ? artifactsProblem(env.AUTOCTX_ARTIFACT_DIR, answer.artifacts) : null;
      if (kept !== null)
        fail(
          'EVALUATOR_FAILED',
          `evaluator answer for ${arm} on ${unit.fixture} (seed ${unit.seed}) ${kept}; nothing was recorded ` +
            `for this pair`,
        );
      answers[arm] = answer;
      const changed = copy.changed();
      if (changed !== null)
        fail(
          'EVALUATOR_FAILED',
          `the evaluator changed its bundle_dir during the ${arm} arm on ${unit.fixture} (seed ` +
            `${unit.seed}): ${changed}; nothing was recorded for this pair`,
        );
    } finally {
      copy.remove();
    }
  }
  const observation = {
    candidate: armObservationOf({...answers.candidate}),
    incumbent: armObservationOf({...answers.incumbent}),
  };
  return {
    trial: unitTrial(run, unit, answers.candidate!, answers.incumbent!),
    observation: pairObserved(observation) ? observation : null,
  };
}

/**
 * Screen or confirm: bind the plan, then the coordinator loop (screen units,
 * adaptive confirmation, then held-out units), each pair recorded (evidence,
 * then record) before the next decision; a re-run resumes without
 * re-evaluating a recorded pair.
 */
export async function evaluateCandidate(options: EvaluateOptions): Promise<EvaluateResult> {
  const timeoutSeconds = evaluatorTimeout(options.timeoutSeconds);
  lockTimeout(options);
  // Checked before anything is locked or written.
  const artifacts =
    options.artifacts === undefined ? null : chosenArtifactDir(knowledgeRootFrom(options.knowledge), options.artifacts);
  // Ctrl-C from here on ends the evaluators and unwinds the run: what it recorded is kept, its locks released.
  const stopUnwinding = unwindOnInterrupt();
  let run: Run | undefined;
  try {
    run = await prepareRun({...options, request: planRequestOf(options)});
    return await evaluatePrepared(run, options, timeoutSeconds, artifacts);
  } catch (error) {
    if (!isInterruption(error)) throw error;
    const e = error as AutoctxError;
    const kept = run?.trials.length ?? 0;
    throw new AutoctxError(
      e.code,
      `${e.message}; ${kept} pair${kept === 1 ? '' : 's'} kept; run the same command to resume`,
      {pairs_recorded: kept},
    );
  } finally {
    stopUnwinding();
  }
}

async function evaluatePrepared(
  run: Run,
  options: EvaluateOptions,
  timeoutSeconds: number,
  artifacts: string | null,
): Promise<EvaluateResult> {
  try {
    const identity = run.plan.plan.candidate_evaluator.evaluator;
    if (identity.mode === 'external')
      fail(
        'EVALUATOR_CHANGED',
        'this plan was bound for external evaluation (plan export); bring results back with trials ingest',
      );
    const env = await prepareArtifactStore(run.store.guard, lockTimeout(options), artifacts);
    const evaluator = createEvaluator({
      command: identity.command,
      mode: identity.mode,
      timeoutSeconds,
      concurrency: options.concurrency ?? 1,
      env: {...env},
    });
    // made inside the try, so that it is always removed (a killed process aside)
    let bundles: MaterializedBundles | undefined;
    try {
      const made = (bundles = materializeForEvaluation([run.candidate, run.incumbent], onInterrupt));
      return await drive(run, (unit, index) => evaluatePair(run, evaluator, unit, index, made, env));
    } finally {
      await evaluator.close();
      bundles?.remove();
    }
  } finally {
    await run.release();
  }
}
