import {jsonEqual} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {
  createEvaluatorPlan,
  evaluatorChange,
  evaluatorFileChange,
  planDifference,
  type BoundPlan,
  type EvaluatorIdentity,
} from '../../../model/evaluation/evaluator-plan.js';
import {checkPlanSize, planDeficits, planRemedy, planUnits, screenSpread} from '../../../model/evaluation/fixtures.js';
import type {ConfirmationPolicy} from '../../../model/evaluation/policy.js';
import type {CandidateRecord} from '../../../model/promotion/records.js';
import type {ContextBundle} from '../../../model/bundle/bundle.js';
import {
  campaignSegment,
  evaluatorFiles,
  pausePoint,
  readFixtures,
  type MatchedEvidence,
  type ScenarioStore,
} from '../../../store/index.js';
import {loadCampaign, loadCampaignPolicy, reserveCandidate, reserveFixturePlan} from '../campaign.js';
import {lockTimeout, openScenario} from '../../common/store-options.js';
import {prepareSigning, signingInputs} from '../../signing/signing.js';
import {resolveDigest} from '../../common/resolve.js';
import {trialPlanProblems} from '../../../model/evaluation/plan-binding.js';
import {guardrailSet} from '../../../model/promotion/guardrails.js';
import type {DriveOptions, Run} from './types.js';
import {lanesFor, loadPolicy} from './plan-policy.js';
import {evidenceProblem, readEvidence} from '../../../store/kinds/evaluation/matched-evidence.js';
import {readPlan, readPlanText, rebindPlan, writePlan} from '../../../store/kinds/evaluation/evaluator-plan.js';
import {requireBundle} from '../../../store/kinds/bundle/bundle.js';
import {readRecord} from '../../../store/kinds/promotion/candidate-record.js';
import {sealProblem} from '../../../store/kinds/evaluation/evidence-seal.js';
import {readTrialObservations} from '../../../store/kinds/evaluation/trial-observations.js';

/** What binds a new plan (screen, confirm, plan export); absent for a run of a plan already bound (trials ingest). */
export interface PlanRequest {
  evaluator: EvaluatorIdentity;
  fixtures: string;
  policyFile?: string | undefined;
  seedsPerFixture?: number | undefined;
  cohort?: string | undefined;
  audit?: string | undefined;
  campaign?: string | undefined;
  campaignPolicyFile?: string | undefined;
  /** Bind this plan in place of the bound one, which is allowed only while nothing has been observed under it. */
  rebind?: boolean | undefined;
  /** --guardrail expressions (none given: the bound plan's, or none). */
  guardrails?: readonly string[] | undefined;
}

export interface PrepareOptions extends DriveOptions {
  candidate: string;
  /**
   * Bind (or check against the bound plan) from these; null: the plan must be bound already and nothing about it can
   * change.
   */
  request: PlanRequest | null;
}

/**
 * Legacy (schema-1) evidence is migrated by `autoctx trials migrate` alone,
 * under the policy it was recorded with: no evaluation command binds a plan,
 * a policy or a record over it. Refused before anything is locked or written.
 */
function refuseLegacy(store: ScenarioStore, digest: string, evidence: MatchedEvidence | null): void {
  if (evidence?.legacy) {
    fail(
      'INVALID_TRANSITION',
      `candidate ${digest} has legacy (schema-1) evidence with no recorded policy; migrate it first under ` +
        `the policy it was recorded with: autoctx trials migrate ${digest.slice(0, 12)} --policy FILE ` +
        `(nothing was written)`,
      {file: store.guard.relative(store.paths.matchedTrials(digest))},
    );
  }
}

/** Bind the requested plan, or check it against the bound one; reserve campaign alpha and fixtures first. */
async function bindPlan(
  store: ScenarioStore,
  options: PrepareOptions,
  request: PlanRequest,
  candidate: ContextBundle,
  incumbent: ContextBundle,
  record: CandidateRecord,
  bound: BoundPlan | null,
  evidence: MatchedEvidence | null,
) {
  // The files the evaluator command names, as they are now: a script edited since the plan was bound is another
  // evaluator.
  const files = request.evaluator.mode === 'external' ? [] : evaluatorFiles(request.evaluator.command);
  // A rebind replaces the bound plan whole: what it is checked against is the plan being bound, not the bound one.
  const rebinding = bound !== null && request.rebind === true;
  // A file the bound evaluator named that differs now is refused first; the refusal says what changed.
  if (bound && !rebinding && evaluatorFileChange(bound.additions, files) !== null)
    refuseEvaluator(store, candidate.digest, bound, evidence, evaluatorChange(bound, request.evaluator, files)!);
  const policy = loadPolicy(request.policyFile, rebinding ? null : bound);
  const fixtures = readFixtures(request.fixtures);
  const cohort =
    request.cohort ??
    (rebinding ? undefined : bound?.plan.cohort) ??
    `${record.source_run_id || 'manual'}:${candidate.evaluator_epoch}:generation:${record.source_generation}`;
  const lanes = lanesFor(fixtures, policy, cohort, rebinding ? null : bound);
  const seeds = request.seedsPerFixture ?? 1;
  // A bound plan is asked for again as it was bound; a new one spreads its screen over fixtures.
  const kept = rebinding ? null : bound;
  const units = planUnits(lanes, seeds, cohort, kept ? screenSpread(kept.plan.units) : true);
  const deficits = planDeficits(units, policy);
  if (deficits)
    fail(
      'PLAN_UNREACHABLE',
      `the fixture plan cannot reach a decision under its policy: ${deficits}; ` +
        `${planRemedy(lanes, seeds, policy)}`,
    );
  const campaignId = request.campaign ?? bound?.additions.campaign_id ?? null;
  if (bound && !rebinding && request.campaign !== undefined && request.campaign !== bound.additions.campaign_id)
    fail('PLAN_CHANGED', `the candidate was bound to campaign ${JSON.stringify(bound.additions.campaign_id)}`);
  const planWith = (confirmation_policy: ConfirmationPolicy) =>
    createEvaluatorPlan({
      scenario: store.scenario,
      evaluator_epoch: candidate.evaluator_epoch,
      candidate_digest: candidate.digest,
      incumbent_digest: incumbent.digest,
      cohort,
      confirmation_policy,
      units,
      evaluator: request.evaluator,
      audit: request.audit ?? (rebinding ? undefined : bound?.additions.audit?.command) ?? null,
      campaign_id: campaignId,
      evaluator_files: files,
      supersedes: rebinding
        ? [...(bound.additions.supersedes ?? []), bound.plan_digest]
        : (bound?.additions.supersedes ?? []),
      guardrails: request.guardrails?.length
        ? guardrailSet(request.guardrails)
        : ((rebinding ? undefined : bound?.additions.guardrails) ?? []),
    });
  // A rebind is refused before anything is written (a campaign reservation) when something was observed, unless
  // the plan asked for is the bound one (a run resumed with the flag still given): that is no rebind.
  if (
    rebinding &&
    planWith(
      campaignId !== null && campaignId === bound.additions.campaign_id ? bound.plan.confirmation_policy : policy,
    ).plan_digest !== bound.plan_digest
  ) {
    rebindAllowed(store, candidate.digest, bound, evidence);
  }
  let campaign: Run['campaign'] = null;
  let effective = policy;
  if (campaignId !== null) {
    const requestedPolicy = loadCampaignPolicy(request.campaignPolicyFile);
    // Alpha first, then the fixture plan: both durable before any evaluation.
    await store.withLock(lockTimeout(options), () => {
      const reserved = reserveCandidate(store, campaignId, requestedPolicy, candidate, policy);
      reserveFixturePlan(store, campaignId, candidate, cohort, units, reserved.policy);
      effective = reserved.policy;
      campaign = {id: campaignId, policy: reserved.campaign};
    });
  }
  const requested = planWith(effective);
  if (evidence?.confirmation_policy && !jsonEqual(evidence.confirmation_policy, effective)) {
    fail(
      'POLICY_MISMATCH',
      `the confirmation policy cannot change once evidence exists (recorded policy ` +
        `${evidence.confirmation_policy_digest})`,
    );
  }
  // The same plan asked for again is no rebind: it is checked against the bound one as any run is.
  if (rebinding && requested.plan_digest !== bound.plan_digest) {
    if (bound.additions.supersedes?.includes(requested.plan_digest))
      fail(
        'PLAN_CHANGED',
        `that plan (${requested.plan_digest}) was bound before and superseded; a superseded plan is never ` +
          `bound again (give another cohort, or propose the candidate again)`,
      );
    await store.withLock(lockTimeout(options), () => {
      rebindAllowed(store, candidate.digest, bound, readEvidence(store, candidate.digest)); // again, under the lock
      rebindPlan(store, bound, requested);
    });
    return {
      plan: requested,
      policy: effective,
      campaign: campaign as Run['campaign'],
      fixtures: new Map(lanes.map((f) => [f.fixture_digest, f])),
      rebound: bound.plan_digest,
    };
  }
  if (bound) {
    const difference = planDifference(bound, requested);
    if (difference === 'evaluator')
      refuseEvaluator(
        store,
        candidate.digest,
        bound,
        evidence,
        evaluatorChange(bound, request.evaluator, files) ??
          `it differs from ${JSON.stringify(bound.plan.candidate_evaluator.evaluator)}`,
      );
    if (difference === 'audit')
      fail(
        'AUDIT_CHANGED',
        `the audit command differs from the one bound in evaluator_plan.json ` +
          `(${JSON.stringify(bound.additions.audit)})`,
      );
    if (difference === 'guardrails')
      fail(
        'PLAN_CHANGED',
        `the guardrails differ from those bound in evaluator_plan.json ` +
          `(${JSON.stringify(bound.additions.guardrails ?? [])}); they are fixed with the plan (--rebind while ` +
          `nothing is recorded binds others)`,
      );
    if (difference !== null)
      fail(
        'PLAN_CHANGED',
        `the fixture plan, cohort, policy or campaign differs from the plan bound in evaluator_plan.json ` +
          `(${bound.plan_digest})`,
      );
  } else {
    await store.withLock(lockTimeout(options), () => writePlan(store, requested));
  }
  return {
    plan: bound ?? requested,
    policy: effective,
    campaign: campaign as Run['campaign'],
    fixtures: new Map(lanes.map((f) => [f.fixture_digest, f])),
    rebound: null,
  };
}

/**
 * A new plan may be bound in place of the bound one only while nothing has
 * been observed under it: no trial recorded (in the evidence, or in a run
 * journal not yet folded) and no campaign reservation naming it. Otherwise
 * the binding is final (PLAN_CHANGED, exit 8).
 */
function rebindAllowed(store: ScenarioStore, digest: string, bound: BoundPlan, evidence: MatchedEvidence | null): void {
  const refusal = rebindRefusal(store, digest, bound, evidence);
  if (refusal !== null) fail('PLAN_CHANGED', refusal);
}

/** EVALUATOR_CHANGED: what changed, and how to go on (--rebind while nothing is recorded under the bound plan). */
function refuseEvaluator(
  store: ScenarioStore,
  digest: string,
  bound: BoundPlan,
  evidence: MatchedEvidence | null,
  change: string,
): never {
  const refusal = rebindRefusal(store, digest, bound, evidence);
  fail(
    'EVALUATOR_CHANGED',
    `the evaluator is not the one bound in evaluator_plan.json: ${change}; ` +
      (refusal === null
        ? 'nothing is recorded under the bound plan yet: run the same command with --rebind to bind this ' +
          'evaluator in its place (the old plan is kept), or restore the bound one'
        : `evidence of two evaluators is never mixed, and --rebind cannot help: ${refusal}; or restore the ` +
          'bound evaluator'),
    /^the evaluator is now|^it differs/.test(change) ? undefined : {file: change.split(/[ ,]/)[0]},
  );
}

/** Why the bound plan can no longer be replaced (null: it can). */
function rebindRefusal(
  store: ScenarioStore,
  digest: string,
  bound: BoundPlan,
  evidence: MatchedEvidence | null,
): string | null {
  const recorded = (evidence?.trials.length ?? 0) + store.journalPairs(digest, bound.plan_digest);
  if (recorded > 0)
    return (
      `candidate ${digest} has ${recorded} recorded trial${recorded === 1 ? '' : 's'} under plan ` +
      `${bound.plan_digest}: once a trial is recorded the binding is final (propose the candidate again ` +
      `under another run id to evaluate it afresh)`
    );
  const campaignId = bound.additions.campaign_id;
  if (campaignId === null) return null;
  const {state} = loadCampaign(store, campaignId, undefined);
  return state.fixture_reservations.some((f) => f.candidate_digest === digest && f.plan_digest === bound.plan_digest)
    ? `campaign ${JSON.stringify(campaignId)} has reserved fixtures for plan ${bound.plan_digest}: its binding is final`
    : null;
}

/**
 * Resolve the candidate and its parent, check recorded evidence against its
 * seal, then bind the plan (or check the bound one) and check every recorded
 * trial against it. With `request: null` the plan must already be bound
 * (confirm or plan export bound it) and nothing about it changes here.
 */
export async function prepareRun(options: PrepareOptions): Promise<Run> {
  // a blank id and a malformed guardrail are refused before anything else
  if (options.request?.campaign !== undefined) campaignSegment(options.request.campaign);
  guardrailSet(options.request?.guardrails ?? []);
  const inputs = signingInputs(options);
  const store = openScenario(options);
  // In a signed tree the seals this run writes are signed: the key is checked before anything is locked or written.
  prepareSigning(store, options, {actor: null, role: 'sign'}, inputs);
  const digest = resolveDigest(store, options.candidate);
  const candidate = requireBundle(store, digest);
  const record = readRecord(store, digest);
  if (!record) fail('INVALID_TRANSITION', `bundle ${digest} is not a proposed candidate (no record.json)`);
  if (record.lifecycle === 'active' || record.lifecycle === 'superseded')
    fail('INVALID_TRANSITION', `bundle ${digest} is ${record.lifecycle}; only candidates are evaluated`);
  if (candidate.parent_digest === null)
    fail('INVALID_TRANSITION', `bundle ${digest} has no parent to be compared with`);
  const incumbent = requireBundle(store, candidate.parent_digest);
  refuseLegacy(store, digest, readEvidence(store, digest));
  // A plan too large to run is refused from its size, before anything is locked or written.
  if (options.request && !readPlan(store, digest))
    checkPlanSize(readFixtures(options.request.fixtures).length, options.request.seedsPerFixture ?? 1);
  // One run per candidate at a time: a second waits for the first, then goes on from what it recorded.
  const release = await store.acquireRunLock(digest, lockTimeout(options));
  pausePoint('run:locked');
  try {
    return await prepareLocked(store, options, digest, candidate, incumbent, release);
  } catch (error) {
    await release();
    throw error;
  }
}

async function prepareLocked(
  store: ScenarioStore,
  options: PrepareOptions,
  digest: string,
  candidate: ContextBundle,
  incumbent: ContextBundle,
  release: () => Promise<void>,
): Promise<Run> {
  // Read again under the run lock: a run that held it before may have changed it.
  const record = readRecord(store, digest);
  if (!record) fail('INVALID_TRANSITION', `bundle ${digest} is not a proposed candidate (no record.json)`);
  if (record.lifecycle === 'active' || record.lifecycle === 'superseded')
    fail('INVALID_TRANSITION', `bundle ${digest} is ${record.lifecycle}; only candidates are evaluated`);
  const bound = readPlan(store, digest);
  if (!options.request && !bound)
    fail('INVALID_TRANSITION', `candidate ${digest} has no bound plan yet; run autoctx plan export (or confirm) first`);
  // Edited evidence is refused before anything is reserved or bound.
  const evidence = readEvidence(store, digest);
  refuseLegacy(store, digest, evidence);
  const edited = evidence && !evidence.legacy ? sealProblem(store, digest, evidence.trials, bound) : null;
  if (edited) fail('INTEGRITY', `${edited}; run autoctx verify`);
  let plan: BoundPlan;
  let policy: ConfirmationPolicy;
  let campaign: Run['campaign'] = null;
  let fixtures: Run['fixtures'] = new Map();
  let rebound: string | null = null;
  if (options.request) {
    ({plan, policy, campaign, fixtures, rebound} = await bindPlan(
      store,
      options,
      options.request,
      candidate,
      incumbent,
      record,
      bound,
      evidence,
    ));
  } else {
    plan = bound!;
    policy = plan.plan.confirmation_policy;
    if (plan.additions.campaign_id)
      campaign = {
        id: plan.additions.campaign_id,
        policy: loadCampaign(store, plan.additions.campaign_id, undefined).policy,
      };
  }
  const recorded = evidence;
  const trials = recorded?.trials ?? [];
  const problem = recorded
    ? evidenceProblem(store, candidate, recorded, plan, record)
    : (trialPlanProblems(plan, trials)[0] ?? null);
  if (problem) fail('INTEGRITY', `${problem}; run autoctx verify`);
  const planText = readPlanText(store, digest);
  if (planText === null || readPlan(store, digest)?.plan_digest !== plan.plan_digest)
    fail('PLAN_CHANGED', 'evaluator_plan.json changed while the run started');
  return {
    store,
    candidate,
    incumbent,
    record,
    policy,
    plan,
    fixtures,
    trials: [...trials],
    observations: new Map(readTrialObservations(store, digest) ?? []),
    options,
    campaign,
    planText,
    release,
    halted: null,
    journal: null,
    unfolded: 0,
    running: null,
    rebound,
  };
}
