import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {jsonEqual} from '../canonical/index.js';
import {AutoctxError, fail} from '../errors.js';
import {runAudit, type AuditCheckpoint} from '../evaluator/audit.js';
import {REQUEST_SCHEMA, type EvaluationRequest} from '../evaluator/protocol.js';
import {createEvaluator, type Evaluator} from '../evaluator/runner.js';
import type {ContextBundle} from '../model/bundle.js';
import {evaluateMatchedTrials} from '../model/comparison.js';
import {createEvaluatorPlan, planDifference, type EvaluatorPlan} from '../model/evaluator-plan.js';
import {assignLanes, planDeficits, planUnits, type Fixture, type PlanUnit} from '../model/fixtures.js';
import {confirmationPolicyDigest, DEFAULT_CONFIRMATION_POLICY, validateConfirmationPolicy, type ConfirmationPolicy} from '../model/policy.js';
import {compareReplay} from '../model/replay.js';
import {isoTimestamp, type CandidateRecord, type ComparisonResult} from '../model/records.js';
import {createMatchedTrial, matchedTrialPairKey, type MatchedTrial, type TrialLane} from '../model/trial.js';
import {campaignFutile, confirmationBlocksReady, type CampaignFalsePromotionPolicy} from '../model/campaign.js';
import {loadCampaign, loadCampaignPolicy, recordCampaignTerminal, reserveCandidate, reserveFixturePlan} from './campaign.js';
import {campaignSegment, readFixtures, readInputJson, type ScenarioStore} from '../store/index.js';
import {materializeBundle} from '../store/materialize.js';
import {lockTimeout, now, openScenario, type StoreOptions} from './context.js';
import {negativeResultFor} from './negative.js';
import {resolveDigest} from './resolve.js';

export interface EvaluateOptions extends StoreOptions {
  candidate: string;
  mode: 'screen' | 'confirm';
  evaluator: string;
  evaluatorMode?: 'per-arm' | 'persistent' | 'external' | undefined;
  evaluatorVersion?: string | undefined;
  fixtures: string;
  policyFile?: string | undefined;
  seedsPerFixture?: number | undefined;
  cohort?: string | undefined;
  timeoutSeconds?: number | undefined;
  concurrency?: number | undefined;
  audit?: string | undefined;
  campaign?: string | undefined;
  campaignPolicyFile?: string | undefined;
  onProgress?: ((event: ProgressEvent) => void) | undefined;
}

export interface ProgressEvent {
  type: 'plan' | 'pair' | 'done';
  lane?: TrialLane;
  fixture?: string;
  seed?: number;
  counts: Record<TrialLane, number>;
  planned: Record<TrialLane, number>;
  decision: ComparisonResult | null;
  min_effect: number;
}

export type EvaluateStatus = 'screened' | 'confirmed' | 'rejected' | 'inconclusive' | 'needs_more_evidence';

export interface EvaluateResult {
  status: EvaluateStatus;
  scenario: string;
  candidate_digest: string;
  parent_digest: string;
  lifecycle: CandidateRecord['lifecycle'];
  comparison: ComparisonResult;
  pairs_evaluated: number;
  pairs_recorded: number;
  plan_digest: string;
}

const TERMINAL = new Set(['rejected', 'inconclusive', 'confirmed']);

/** Lifecycle a comparison leaves the record in, as the reference maps it. */
function lifecycleFor(decision: ComparisonResult['decision'], current: CandidateRecord['lifecycle']): CandidateRecord['lifecycle'] {
  if (decision === 'confirmed') return 'confirmed';
  if (decision === 'rejected') return 'rejected';
  if (decision === 'needs_screen') return current;
  return 'screened';
}

/**
 * The lane the next units come from, or null when the decision needs none. In
 * campaign mode confirmation goes on after the comparison asks for held-out
 * pairs until the campaign's blocks are ready (the reference's rule).
 */
function phaseOf(decision: ComparisonResult | null, run?: Run): TrialLane | null {
  if (decision === null || decision.decision === 'needs_screen') return 'screen';
  if (decision.decision === 'needs_confirmation') return 'confirmation';
  if (decision.decision === 'needs_heldout') {
    if (run?.campaign && !confirmationBlocksReady(run.trials, run.policy, run.campaign.policy)) return 'confirmation';
    return 'heldout';
  }
  return null;
}

/** Under the betting method, a candidate whose bets have lost stops without promotion. */
function futile(run: Run): boolean {
  return run.campaign !== null && run.campaign.policy.robust_method === 'bounded_betting' && campaignFutile(run.trials, run.policy, run.campaign.policy);
}

function loadPolicy(file: string | undefined, bound: EvaluatorPlan | null): ConfirmationPolicy {
  if (file === undefined) return bound?.plan.confirmation_policy ?? {...DEFAULT_CONFIRMATION_POLICY};
  const value = readInputJson(file);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('SCHEMA_VIOLATION', `${file}: a policy must be a JSON object`);
  try {
    return validateConfirmationPolicy({...DEFAULT_CONFIRMATION_POLICY, ...value});
  } catch (error) {
    if (error instanceof AutoctxError) throw new AutoctxError(error.code, `${file}: ${error.message}`, {file});
    throw error;
  }
}

/**
 * A schema-1 evidence array is rewritten as a schema-2 envelope only after
 * replaying it under the policy reproduces the recorded comparison and
 * lifecycle; otherwise nothing is rewritten and the run fails closed.
 */
async function migrateLegacy(store: ScenarioStore, options: EvaluateOptions, candidate: ContextBundle, record: CandidateRecord, trials: MatchedTrial[], policy: ConfirmationPolicy): Promise<void> {
  if (!record.comparison) fail('INTEGRITY', `candidate ${candidate.digest} has legacy evidence but no recorded comparison to verify it against`);
  const replayed = evaluateMatchedTrials(candidate, trials, policy);
  const verdict = compareReplay(record.comparison, replayed);
  const lifecycle = replayed.decision === 'inconclusive' ? 'rejected' : lifecycleFor(replayed.decision, record.lifecycle);
  if (!verdict.matches) fail('INTEGRITY', `the legacy evidence of ${candidate.digest} does not reproduce the recorded comparison under this policy; nothing was rewritten`);
  if (lifecycle !== record.lifecycle) fail('INTEGRITY', `the legacy evidence of ${candidate.digest} does not reproduce the terminal lifecycle "${record.lifecycle}"; nothing was rewritten`);
  const rekeyed = trials.map((t) => createMatchedTrial(t));
  await store.withLock(lockTimeout(options), () => {
    store.writeEvidence(candidate.digest, rekeyed, policy);
    store.writeRecord({...record, schema_version: 2, confirmation_policy: policy, confirmation_policy_digest: confirmationPolicyDigest(policy), updated_at: isoTimestamp(now(options))});
  });
}

/** Everything one evaluation run works with, resolved and checked. */
interface Run {
  store: ScenarioStore;
  candidate: ContextBundle;
  incumbent: ContextBundle;
  record: CandidateRecord;
  policy: ConfirmationPolicy;
  plan: EvaluatorPlan;
  fixtures: Map<string, Fixture>;
  trials: MatchedTrial[];
  options: EvaluateOptions;
  campaign: {id: string; policy: CampaignFalsePromotionPolicy} | null;
  /** The bytes of evaluator_plan.json as bound, compared before every arm. */
  planText: string | null;
}

/** Resolve the candidate, build the plan, bind it (or check the bound one), check recorded evidence. */
async function prepare(options: EvaluateOptions): Promise<Run> {
  if (options.campaign !== undefined) campaignSegment(options.campaign); // a blank id is refused before anything else
  const store = openScenario(options);
  const digest = resolveDigest(store, options.candidate);
  const candidate = store.requireBundle(digest);
  const record = store.readRecord(digest);
  if (!record) fail('INVALID_TRANSITION', `bundle ${digest} is not a proposed candidate (no record.json)`);
  if (record.lifecycle === 'active' || record.lifecycle === 'superseded') fail('INVALID_TRANSITION', `bundle ${digest} is ${record.lifecycle}; only candidates are evaluated`);
  if (candidate.parent_digest === null) fail('INVALID_TRANSITION', `bundle ${digest} has no parent to be compared with`);
  const incumbent = store.requireBundle(candidate.parent_digest);
  const bound = store.readPlan(digest);
  const policy = loadPolicy(options.policyFile, bound);
  const fixtures = readFixtures(options.fixtures);
  const lanes = assignLanes(fixtures, policy);
  const cohort = options.cohort ?? bound?.plan.cohort ?? `${record.source_run_id || 'manual'}:${candidate.evaluator_epoch}:generation:${record.source_generation}`;
  const units = planUnits(lanes, options.seedsPerFixture ?? 1, cohort);
  const deficits = planDeficits(units, policy);
  if (deficits) fail('PLAN_UNREACHABLE', `the fixture plan cannot reach a decision under its policy: ${deficits}`);
  // Edited evidence is refused before anything is reserved or bound.
  const evidence = store.readEvidence(digest);
  const seal = evidence && !evidence.legacy ? store.sealStatus(digest, evidence.trials) : null;
  if (seal && (seal.changed.length > 0 || seal.missing.length > 0)) {
    fail('INTEGRITY', `the matched trials of ${digest} differ from evidence_seal.json (${seal.changed.length} changed, ${seal.missing.length} missing): the evidence was edited; run autoctx verify`);
  }
  const campaignId = options.campaign ?? bound?.plan.campaign_id ?? null;
  if (bound && options.campaign !== undefined && options.campaign !== bound.plan.campaign_id) fail('PLAN_CHANGED', `the candidate was bound to campaign ${JSON.stringify(bound.plan.campaign_id)}`);
  let campaign: Run['campaign'] = null;
  let effective = policy;
  if (campaignId !== null) {
    const requestedPolicy = loadCampaignPolicy(options.campaignPolicyFile);
    // Alpha first, then the fixture plan: both durable before any evaluation.
    await store.withLock(lockTimeout(options), () => {
      const reserved = reserveCandidate(store, campaignId, requestedPolicy, candidate, policy);
      reserveFixturePlan(store, campaignId, candidate, cohort, units, reserved.policy);
      effective = reserved.policy;
      campaign = {id: campaignId, policy: reserved.campaign};
    });
  }
  const requested = createEvaluatorPlan({
    scenario: store.scenario,
    evaluator_epoch: candidate.evaluator_epoch,
    candidate_digest: digest,
    incumbent_digest: incumbent.digest,
    cohort,
    confirmation_policy: effective,
    units,
    evaluator: {command: options.evaluator, mode: options.evaluatorMode ?? 'per-arm', version: options.evaluatorVersion ?? null},
    audit: options.audit ?? bound?.plan.audit?.command ?? null,
    campaign_id: campaignId,
  });
  if (evidence?.legacy) await migrateLegacy(store, options, candidate, record, evidence.trials, effective);
  if (evidence?.confirmation_policy && !jsonEqual(evidence.confirmation_policy, effective)) {
    fail('POLICY_MISMATCH', `the confirmation policy cannot change once evidence exists (recorded policy ${evidence.confirmation_policy_digest})`);
  }
  if (bound) {
    const difference = planDifference(bound.plan, requested.plan);
    if (difference === 'evaluator') fail('EVALUATOR_CHANGED', `the evaluator differs from the one bound in evaluator_plan.json (${JSON.stringify(bound.plan.candidate_evaluator.evaluator)})`);
    if (difference === 'audit') fail('AUDIT_CHANGED', `the audit command differs from the one bound in evaluator_plan.json (${JSON.stringify(bound.plan.audit)})`);
    if (difference === 'plan') fail('PLAN_CHANGED', `the fixture plan, cohort or policy differs from the plan bound in evaluator_plan.json (${bound.plan_digest})`);
  } else {
    await store.withLock(lockTimeout(options), () => store.writePlan(requested));
  }
  const plan = bound ?? requested;
  const trials = (evidence?.legacy ? store.readEvidence(digest)?.trials : evidence?.trials) ?? [];
  const planned = new Map(plan.plan.units.map((u) => [`${u.fixture_digest}\u0000${u.seed}`, u]));
  for (const t of trials) {
    const u = planned.get(`${t.fixture_digest}\u0000${t.seed}`);
    if (!u || u.lane !== t.lane || u.fixture !== t.fixture || t.cohort !== plan.plan.cohort || t.incumbent_digest !== incumbent.digest) {
      fail('INTEGRITY', `recorded trial ${t.pair_key} does not match the bound plan`);
    }
  }
  const planText = store.readText(store.paths.evaluatorPlan(digest));
  if (planText === null || store.readPlan(digest)?.plan_digest !== plan.plan_digest) fail('PLAN_CHANGED', 'evaluator_plan.json changed while the run started');
  return {store, candidate, incumbent, record, policy: effective, plan, fixtures: new Map(lanes.map((f) => [f.fixture_digest, f])), trials: [...trials], options, campaign, planText};
}

function counts(trials: readonly MatchedTrial[]): Record<TrialLane, number> {
  const c = {screen: 0, confirmation: 0, heldout: 0};
  for (const t of trials) c[t.lane]++;
  return c;
}

function progress(run: Run, type: ProgressEvent['type'], decision: ComparisonResult | null, unit?: PlanUnit): void {
  if (!run.options.onProgress) return;
  const planned = {screen: 0, confirmation: 0, heldout: 0};
  for (const u of run.plan.plan.units) planned[u.lane]++;
  run.options.onProgress({type, ...(unit ? {lane: unit.lane, fixture: unit.fixture, seed: unit.seed} : {}), counts: counts(run.trials), planned, decision, min_effect: run.policy.min_effect});
}

/** Evidence first, then the record (a crash between them is repaired by the next run). */
async function commit(run: Run, trial: MatchedTrial | null, decision: ComparisonResult): Promise<void> {
  const {store, options} = run;
  await store.withLock(lockTimeout(options), () => {
    if (trial) store.writeEvidence(run.candidate.digest, run.trials, run.policy);
    const current = store.readRecord(run.candidate.digest)!;
    const lifecycle = lifecycleFor(decision.decision, current.lifecycle);
    if (current.lifecycle === 'rejected' || (jsonEqual(current.comparison, decision) && current.lifecycle === lifecycle)) return;
    const updated: CandidateRecord = {
      ...current,
      schema_version: 2,
      lifecycle,
      comparison: decision,
      confirmation_policy: run.policy,
      confirmation_policy_digest: run.plan.plan.confirmation_policy_digest,
      rationale: decision.reason,
      updated_at: isoTimestamp(now(options)),
    };
    store.writeRecord(updated);
    run.record = updated;
  });
}

async function audit(run: Run, checkpoint: AuditCheckpoint, extra: Record<string, unknown>): Promise<string | null> {
  const command = run.plan.plan.audit?.command;
  if (!command) return null;
  const r = await runAudit(command, checkpoint, {scenario: run.store.scenario, candidate_digest: run.candidate.digest, plan_digest: run.plan.plan_digest, ...extra}, run.options.timeoutSeconds ?? 120);
  return r.outcome;
}

const FUTILE_REASON = 'campaign betting test found the candidate futile';

/** A rejected or inconclusive comparison: negative result, audit, campaign record, then the terminal lifecycle. */
async function terminate(run: Run, decision: ComparisonResult, kind?: 'false-promotion-blocked'): Promise<void> {
  const {store, candidate, options} = run;
  const inconclusive = decision.decision === 'inconclusive';
  let evidenceDigest: string | null = null;
  await store.withLock(lockTimeout(options), () => {
    const negative = negativeResultFor(store, candidate, run.record, kind ?? (inconclusive ? 'inconclusive' : 'rejected'), decision.reason, isoTimestamp(now(options)), {comparison: decision});
    store.writeNegativeResult(candidate.digest, negative.document);
    evidenceDigest = negative.evidenceDigest;
  });
  if (inconclusive) await audit(run, 'inconclusive_gate', {comparison: decision, evidence_digest: evidenceDigest});
  await store.withLock(lockTimeout(options), () => {
    if (run.campaign) recordCampaignTerminal(store, run.campaign.id, candidate.digest, inconclusive ? 'inconclusive' : 'rejected', decision.reason);
    const current = store.readRecord(candidate.digest)!;
    if (current.lifecycle === 'rejected') return;
    const updated: CandidateRecord = {
      ...current,
      lifecycle: 'rejected',
      rationale: inconclusive ? `terminal inconclusive evaluation: ${decision.reason}` : decision.reason,
      updated_at: isoTimestamp(now(options)),
    };
    store.writeRecord(updated);
    run.record = updated;
  });
}

function request(run: Run, unit: PlanUnit, arm: 'candidate' | 'incumbent', pairKey: string, dirs: Record<string, string>): EvaluationRequest {
  const f = run.fixtures.get(unit.fixture_digest)!;
  const bundle = arm === 'candidate' ? run.candidate : run.incumbent;
  return {
    schema: REQUEST_SCHEMA,
    request_id: `${pairKey}:${arm}`,
    arm,
    scenario: run.store.scenario,
    bundle_digest: bundle.digest,
    bundle_dir: dirs[bundle.digest]!,
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

/** The matched trial of one unit of a run's plan, given both arms' answers. */
export function unitTrial(run: Run, unit: PlanUnit, candidate: {score: number; valid?: boolean}, incumbent: {score: number; valid?: boolean}): MatchedTrial {
  return createMatchedTrial({
    candidate_digest: run.candidate.digest,
    incumbent_digest: run.incumbent.digest,
    evaluator_epoch: run.candidate.evaluator_epoch,
    cohort: run.plan.plan.cohort,
    fixture: unit.fixture,
    fixture_digest: unit.fixture_digest,
    seed: unit.seed,
    lane: unit.lane,
    candidate_score: candidate.score,
    incumbent_score: incumbent.score,
    ...(candidate.valid !== undefined ? {candidate_valid: candidate.valid} : {}),
    ...(incumbent.valid !== undefined ? {incumbent_valid: incumbent.valid} : {}),
  });
}

/** Both arms of one unit, in alternating order, with the plan re-checked before each arm. */
async function evaluatePair(run: Run, evaluator: Evaluator, unit: PlanUnit, index: number, dirs: Record<string, string>): Promise<MatchedTrial> {
  const pairKey = matchedTrialPairKey({evaluator_epoch: run.candidate.evaluator_epoch, cohort: run.plan.plan.cohort, fixture_digest: unit.fixture_digest, seed: unit.seed});
  const arms: Array<'candidate' | 'incumbent'> = index % 2 === 0 ? ['candidate', 'incumbent'] : ['incumbent', 'candidate'];
  const answers: Record<string, {score: number; valid: boolean}> = {};
  for (const arm of arms) {
    // The bound plan is checked before every arm: its bytes must be those it was bound with.
    const current = run.store.readText(run.store.paths.evaluatorPlan(run.candidate.digest));
    if (current !== run.planText) fail('PLAN_CHANGED', 'evaluator_plan.json changed during evaluation');
    answers[arm] = await evaluator.evaluate(request(run, unit, arm, pairKey, dirs));
  }
  return unitTrial(run, unit, answers.candidate!, answers.incumbent!);
}

/**
 * Run the units of one lane: up to `concurrency` pairs at once, committed in
 * plan order; after each commit the decision decides whether the lane goes
 * on. Results past the point where it stops are discarded, so the evidence
 * equals a sequential run's.
 */
/** Where the pairs of a run come from: an evaluator, or results brought back (null: none for that unit). */
export type PairSource = (unit: PlanUnit, index: number) => Promise<MatchedTrial | null>;

async function runLane(run: Run, source: PairSource, lane: TrialLane, state: {decision: ComparisonResult | null; evaluated: number}): Promise<void> {
  const done = new Set(run.trials.map((t) => `${t.fixture_digest}\u0000${t.seed}`));
  const units = run.plan.plan.units.map((u, index) => ({u, index})).filter(({u}) => u.lane === lane && !done.has(`${u.fixture_digest}\u0000${u.seed}`));
  const limit = run.options.concurrency ?? 1;
  const results = new Map<number, {trial?: MatchedTrial | null; error?: unknown}>();
  const inflight = new Map<number, Promise<void>>();
  let next = 0;
  let committed = 0;
  let stop = false;
  let failure: unknown = null;
  while (!stop) {
    while (!stop && failure === null && inflight.size < limit && next < units.length) {
      const k = next++;
      const {u, index} = units[k]!;
      // A settled pair leaves `inflight` in its own callback: a commit may await in between,
      // and a settled promise left in the race would make it spin.
      const settle = (r: {trial?: MatchedTrial | null; error?: unknown}) => {
        inflight.delete(k);
        results.set(k, r);
      };
      inflight.set(
        k,
        source(u, index).then(
          (trial) => settle({trial}),
          (error: unknown) => settle({error}),
        ),
      );
    }
    if (inflight.size === 0 && !results.has(committed)) break;
    if (!results.has(committed)) await Promise.race(inflight.values());
    while (!stop && failure === null && results.has(committed)) {
      const r = results.get(committed)!;
      results.delete(committed);
      if (r.error !== undefined) {
        failure = r.error;
        break;
      }
      if (!r.trial) {
        stop = true; // no result for this unit: the lane cannot go on past it
        break;
      }
      run.trials.push(r.trial);
      state.evaluated++;
      const decision = evaluateMatchedTrials(run.candidate, run.trials, run.policy);
      await commit(run, r.trial, decision);
      state.decision = decision;
      progress(run, 'pair', decision, units[committed]!.u);
      committed++;
      if (phaseOf(decision, run) !== lane || (run.options.mode === 'screen' && lane !== 'screen') || (lane === 'confirmation' && futile(run))) stop = true;
    }
    if (failure !== null) stop = true;
  }
  await Promise.allSettled(inflight.values());
  if (failure !== null) {
    await audit(run, 'integrity_alert', {error: failure instanceof Error ? failure.message : String(failure)});
    throw failure;
  }
}

function statusOf(mode: 'screen' | 'confirm', decision: ComparisonResult): EvaluateStatus {
  if (decision.decision === 'rejected') return 'rejected';
  if (decision.reason === FUTILE_REASON) return 'rejected';
  if (decision.decision === 'inconclusive') return 'inconclusive';
  if (decision.decision === 'confirmed') return 'confirmed';
  if (mode === 'screen' && decision.decision !== 'needs_screen') return 'screened';
  return 'needs_more_evidence';
}

/**
 * Drive a run from its recorded state: lane by lane as the decision asks,
 * then the terminal records. Shared by evaluation and by ingestion.
 */
export async function drive(run: Run, source: PairSource): Promise<EvaluateResult> {
  try {
    return await driveLoop(run, source);
  } finally {
    await sealRecorded(run);
  }
}

/**
 * Seal the evidence as it stands on disk when a run ends, also after a failure
 * (trials recorded before it stay recorded). A seal that cannot be written now
 * leaves unsealed trials, which verify reports and the next run or repair seals.
 */
async function sealRecorded(run: Run): Promise<void> {
  const {store, candidate, options} = run;
  try {
    await store.withLock(lockTimeout(options), () => {
      const evidence = store.readEvidence(candidate.digest);
      if (!evidence || evidence.legacy || evidence.trials.length === 0) return;
      const status = store.sealStatus(candidate.digest, evidence.trials);
      if (status && (status.changed.length > 0 || status.missing.length > 0)) return; // an edit: verify reports it, nothing is sealed over it
      if (status === null || status.unsealed > 0) store.writeEvidenceSeal(candidate.digest, evidence.trials);
    });
  } catch {
    // Repairable, and never more important than the error that ended the run.
  }
}

async function driveLoop(run: Run, source: PairSource): Promise<EvaluateResult> {
  let decision = evaluateMatchedTrials(run.candidate, run.trials, run.policy);
  const state = {decision: decision as ComparisonResult | null, evaluated: 0};
  // Recovery: evidence recorded but the record lags behind it.
  if (run.trials.length > 0) await commit(run, null, decision);
  progress(run, 'plan', decision);
  for (;;) {
    if (TERMINAL.has(decision.decision) || run.record.lifecycle === 'rejected' || futile(run)) break;
    const lane = phaseOf(decision, run);
    if (lane === null || (run.options.mode === 'screen' && lane !== 'screen')) break;
    const before = run.trials.length;
    await runLane(run, source, lane, state);
    decision = state.decision ?? decision;
    if (run.trials.length === before) break; // the lane has no units (or results) left
  }
  if (decision.decision === 'rejected' || decision.decision === 'inconclusive') {
    if (!run.store.readNegativeResult(run.candidate.digest) || run.record.lifecycle !== 'rejected') await terminate(run, decision);
  } else if (futile(run) && !TERMINAL.has(decision.decision)) {
    decision = {...decision, decision: 'rejected', reason: FUTILE_REASON};
    await terminate(run, decision, 'false-promotion-blocked');
  }
  progress(run, 'done', decision);
  return {
    status: statusOf(run.options.mode, decision),
    scenario: run.store.scenario,
    candidate_digest: run.candidate.digest,
    parent_digest: run.incumbent.digest,
    lifecycle: run.store.readRecord(run.candidate.digest)!.lifecycle,
    comparison: decision,
    pairs_evaluated: state.evaluated,
    pairs_recorded: run.trials.length,
    plan_digest: run.plan.plan_digest,
  };
}

/**
 * The coordinator loop: screen units, adaptive confirmation, then held-out
 * units, each pair recorded (evidence, then record) before the next decision;
 * a re-run resumes without re-evaluating a recorded pair.
 */
export async function evaluateCandidate(options: EvaluateOptions): Promise<EvaluateResult> {
  const run = await prepare(options);
  const identity = run.plan.plan.candidate_evaluator.evaluator;
  if (identity.mode === 'external') fail('EVALUATOR_CHANGED', 'this plan was bound for external evaluation (plan export); bring results back with trials ingest');
  const evaluator = createEvaluator({command: identity.command, mode: identity.mode, timeoutSeconds: options.timeoutSeconds ?? 120, concurrency: options.concurrency ?? 1});
  let dirRoot: string | undefined; // made inside the try, so that it is always removed (a killed process aside)
  try {
    dirRoot = mkdtempSync(path.join(os.tmpdir(), 'autoctx-bundles-'));
    const dirs: Record<string, string> = {};
    for (const b of [run.candidate, run.incumbent]) {
      dirs[b.digest] = path.join(dirRoot, b.digest);
      materializeBundle(b, dirs[b.digest]!);
    }
    return await drive(run, (unit, index) => evaluatePair(run, evaluator, unit, index, dirs));
  } finally {
    await evaluator.close();
    if (dirRoot) rmSync(dirRoot, {recursive: true, force: true});
  }
}

/**
 * A run from the plan already bound (by confirm or plan export): for results
 * brought back from elsewhere. Nothing about the plan can change here.
 */
async function prepareBound(options: StoreOptions & {candidate: string}): Promise<Run> {
  const store = openScenario(options);
  const digest = resolveDigest(store, options.candidate);
  const candidate = store.requireBundle(digest);
  const record = store.readRecord(digest);
  if (!record) fail('INVALID_TRANSITION', `bundle ${digest} is not a proposed candidate`);
  if (record.lifecycle === 'active' || record.lifecycle === 'superseded') fail('INVALID_TRANSITION', `bundle ${digest} is ${record.lifecycle}; only candidates are evaluated`);
  const plan = store.readPlan(digest);
  if (!plan) fail('INVALID_TRANSITION', `candidate ${digest} has no bound plan yet; run autoctx plan export (or confirm) first`);
  const incumbent = store.requireBundle(candidate.parent_digest!);
  const evidence = store.readEvidence(digest);
  let campaign: Run['campaign'] = null;
  if (plan.plan.campaign_id) campaign = {id: plan.plan.campaign_id, policy: loadCampaign(store, plan.plan.campaign_id, undefined).policy};
  return {store, candidate, incumbent, record, policy: plan.plan.confirmation_policy, plan, fixtures: new Map(), trials: [...(evidence?.trials ?? [])], options: {...options, mode: 'confirm', evaluator: '', fixtures: ''}, campaign, planText: store.readText(store.paths.evaluatorPlan(digest))};
}

export {prepare, prepareBound, type Run};
