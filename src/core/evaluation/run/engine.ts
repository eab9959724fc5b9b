import {runAudit, type AuditCheckpoint} from '../../../evaluator/audit.js';
import {isInterruption} from '../../../evaluator/run-command.js';
import {campaignFutile, confirmationBlocksReady} from '../../../model/evaluation/campaign.js';
import {RunningComparison} from '../../../model/evaluation/comparison.js';
import type {PlanUnit} from '../../../model/evaluation/fixtures.js';
import {isoTimestamp, type ComparisonResult} from '../../../model/promotion/records.js';
import {createMatchedTrial, type MatchedTrial, type TrialLane} from '../../../model/evaluation/trial.js';
import type {PairObservation} from '../../../model/evaluation/observations.js';
import {laneAfter} from '../../../model/evaluation/plan-binding.js';
import {recordCampaignTerminal} from '../campaign.js';
import {evaluatorTimeout, lockTimeout, now} from '../../common/store-options.js';
import {markRejected, writeRejection} from '../../promotion/rejection.js';
import {dropUnfolded, fold, openJournal, recordPair} from './commit.js';
import type {EvaluateResult, EvaluateStatus, ProgressEvent, Run} from './types.js';
import {readRecord} from '../../../store/kinds/promotion/candidate-record.js';
import {readNegativeResult} from '../../../store/kinds/promotion/negative-result.js';

/**
 * The run engine: drive a prepared run from its recorded state, lane by lane
 * as the decision asks, committing each pair (evidence, then record) under the
 * scenario lock, then the terminal records and the seal. Shared by local
 * evaluation (screen, confirm) and by results brought back (trials ingest).
 */

const TERMINAL = new Set(['rejected', 'inconclusive', 'confirmed']);
const FUTILE_REASON = 'campaign betting test found the candidate futile';

/** One pair as a source gives it: the trial, and what was observed of its arms (null: nothing). */
export interface PairResult {
  trial: MatchedTrial;
  observation: PairObservation | null;
}

/** Where the pairs of a run come from: an evaluator, or results brought back (null: none for that unit). */
export type PairSource = (unit: PlanUnit, index: number) => Promise<PairResult | null>;

/**
 * The lane the next units come from, or null when the decision needs none. In
 * campaign mode confirmation goes on after the comparison asks for held-out
 * pairs until the campaign's blocks are ready (the reference's rule).
 */
function phaseOf(decision: ComparisonResult | null, run: Run): TrialLane | null {
  return laneAfter(
    decision,
    () => !run.campaign || confirmationBlocksReady(run.trials, run.policy, run.campaign.policy),
  );
}

/** Under the betting method, a candidate whose bets have lost stops without promotion. */
function futile(run: Run): boolean {
  return (
    run.campaign !== null &&
    run.campaign.policy.robust_method === 'bounded_betting' &&
    campaignFutile(run.trials, run.policy, run.campaign.policy)
  );
}

function counts(trials: ReadonlyArray<{lane: TrialLane}>): Record<TrialLane, number> {
  const c = {screen: 0, confirmation: 0, heldout: 0};
  for (const t of trials) c[t.lane]++;
  return c;
}

/** The planned units per lane, counted once per plan. */
const plannedCounts = new WeakMap<Run['plan'], Record<TrialLane, number>>();
function plannedOf(run: Run): Record<TrialLane, number> {
  let planned = plannedCounts.get(run.plan);
  if (!planned) plannedCounts.set(run.plan, (planned = counts(run.plan.plan.units)));
  return planned;
}

function progress(run: Run, type: ProgressEvent['type'], decision: ComparisonResult | null, unit?: PlanUnit): void {
  if (!run.options.onProgress) return;
  // The decision counts every recorded pair by lane; without one (nothing recorded yet) they are counted.
  const recorded = decision
    ? {screen: decision.screen_pairs, confirmation: decision.confirmation_pairs, heldout: decision.heldout_pairs}
    : counts(run.trials);
  const planned = plannedOf(run);
  const p = run.policy;
  // The screen and the held-out lane decide at their minimum; confirmation stops between its minimum and maximum.
  const reach = {
    screen: {min: Math.min(p.min_screen_pairs, planned.screen), max: Math.min(p.min_screen_pairs, planned.screen)},
    confirmation: {
      min: Math.min(p.min_confirmation_pairs, planned.confirmation),
      max: Math.min(p.max_confirmation_pairs, planned.confirmation),
    },
    heldout: {min: Math.min(p.min_heldout_pairs, planned.heldout), max: Math.min(p.min_heldout_pairs, planned.heldout)},
  };
  run.options.onProgress({
    type,
    ...(unit ? {lane: unit.lane, fixture: unit.fixture, seed: unit.seed} : {}),
    counts: recorded,
    planned,
    decision,
    min_effect: p.min_effect,
    reach,
  });
}

async function audit(run: Run, checkpoint: AuditCheckpoint, extra: Record<string, unknown>): Promise<string | null> {
  const command = run.plan.additions.audit?.command;
  if (!command) return null;
  const r = await runAudit(
    command,
    checkpoint,
    {scenario: run.store.scenario, candidate_digest: run.candidate.digest, plan_digest: run.plan.plan_digest, ...extra},
    evaluatorTimeout(run.options.timeoutSeconds),
  );
  return r.outcome;
}

/** A rejected or inconclusive comparison: negative result, audit, campaign record, then the terminal lifecycle. */
async function terminate(run: Run, decision: ComparisonResult, kind?: 'false-promotion-blocked'): Promise<void> {
  const {store, candidate, options} = run;
  const inconclusive = decision.decision === 'inconclusive';
  const reason = decision.reason;
  let evidenceDigest: string | null = null;
  await store.withLock(lockTimeout(options), () => {
    evidenceDigest = writeRejection(store, candidate, run.record, {
      kind: kind ?? (inconclusive ? 'inconclusive' : 'rejected'),
      reason,
      at: isoTimestamp(now(options)),
      comparison: decision,
    });
  });
  if (inconclusive) await audit(run, 'inconclusive_gate', {comparison: decision, evidence_digest: evidenceDigest});
  await store.withLock(lockTimeout(options), () => {
    if (run.campaign)
      recordCampaignTerminal(
        store,
        run.campaign.id,
        candidate.digest,
        inconclusive ? 'inconclusive' : 'rejected',
        reason,
      );
    run.record = markRejected(
      store,
      candidate.digest,
      {
        reason,
        rationale: inconclusive ? `terminal inconclusive evaluation: ${reason}` : reason,
        at: isoTimestamp(now(options)),
      },
      'evaluate',
    );
  });
}

/** The matched trial of one unit of a run's plan, given both arms' answers. */
export function unitTrial(
  run: Run,
  unit: PlanUnit,
  candidate: {score: number; valid?: boolean},
  incumbent: {score: number; valid?: boolean},
): MatchedTrial {
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

/**
 * Run the units of one lane: up to `concurrency` pairs at once, committed in
 * plan order; after each commit the decision decides whether the lane goes
 * on. Results past the point where it stops are discarded, so the evidence
 * equals a sequential run's.
 */
async function runLane(
  run: Run,
  source: PairSource,
  lane: TrialLane,
  state: {decision: ComparisonResult | null; evaluated: number},
): Promise<void> {
  const done = new Set(run.trials.map((t) => `${t.fixture_digest}\u0000${t.seed}`));
  const units = run.plan.plan.units
    .map((u, index) => ({u, index}))
    .filter(({u}) => u.lane === lane && !done.has(`${u.fixture_digest}\u0000${u.seed}`));
  const limit = run.options.concurrency ?? 1;
  const results = new Map<number, {pair?: PairResult | null; error?: unknown}>();
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
      const settle = (r: {pair?: PairResult | null; error?: unknown}) => {
        inflight.delete(k);
        results.set(k, r);
      };
      inflight.set(
        k,
        source(u, index).then(
          (pair) => settle({pair}),
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
      if (!r.pair) {
        stop = true; // no result for this unit: the lane cannot go on past it
        break;
      }
      const trial = r.pair.trial;
      run.trials.push(trial);
      await recordPair(run, trial, r.pair.observation);
      if (run.halted) {
        stop = true;
        break;
      }
      run.running!.add(trial, trial.pair_key);
      const decision = run.running!.result();
      state.evaluated++;
      state.decision = decision;
      progress(run, 'pair', decision, units[committed]!.u);
      committed++;
      if (
        phaseOf(decision, run) !== lane ||
        (run.options.mode === 'screen' && lane !== 'screen') ||
        (lane === 'confirmation' && futile(run))
      )
        stop = true;
    }
    if (failure !== null) stop = true;
  }
  await Promise.allSettled(inflight.values());
  // The lane's end (or the run's failure): what it recorded becomes evidence.
  if (!run.halted && run.unfolded > 0 && state.decision) await fold(run, state.decision);
  if (failure !== null) {
    // Ctrl-C is no integrity alert: the run stops, what it recorded is kept.
    if (!isInterruption(failure))
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

async function driveLoop(run: Run, source: PairSource): Promise<EvaluateResult> {
  await openJournal(run);
  run.running = new RunningComparison(run.candidate, run.policy);
  for (const t of run.trials) run.running.add(t, t.pair_key);
  let decision = run.running.result();
  const state = {decision: decision as ComparisonResult | null, evaluated: 0};
  // Rejected by hand (or as stale) before this run took its lock: nothing is recorded, and the run says so.
  if (run.record.lifecycle === 'rejected' && !TERMINAL.has(decision.decision)) {
    run.halted = 'rejected';
    dropUnfolded(run);
  }
  // Recovery: pairs an interrupted run left in its journal, or evidence the record lags behind.
  if (run.trials.length > 0 && !run.halted) await fold(run, decision);
  progress(run, 'plan', decision);
  for (;;) {
    if (run.halted || TERMINAL.has(decision.decision) || run.record.lifecycle === 'rejected' || futile(run)) break;
    const lane = phaseOf(decision, run);
    if (lane === null || (run.options.mode === 'screen' && lane !== 'screen')) break;
    const before = run.trials.length;
    await runLane(run, source, lane, state);
    decision = state.decision ?? decision;
    if (run.trials.length === before) break; // the lane has no units (or results) left
  }
  if (run.halted) {
    // The candidate changed under the run (rejected by hand, say): report what the record says now.
    progress(run, 'done', decision);
    const record = readRecord(run.store, run.candidate.digest)!;
    return {
      status: record.lifecycle === 'rejected' ? 'rejected' : 'needs_more_evidence',
      scenario: run.store.scenario,
      candidate_digest: run.candidate.digest,
      parent_digest: run.incumbent.digest,
      lifecycle: record.lifecycle,
      comparison: record.comparison ?? decision,
      pairs_evaluated: state.evaluated,
      pairs_recorded: run.trials.length,
      plan_digest: run.plan.plan_digest,
      ...(run.rebound ? {superseded_plan_digest: run.rebound} : {}),
    };
  }
  if (decision.decision === 'rejected' || decision.decision === 'inconclusive') {
    if (!readNegativeResult(run.store, run.candidate.digest) || run.record.lifecycle !== 'rejected')
      await terminate(run, decision);
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
    lifecycle: readRecord(run.store, run.candidate.digest)!.lifecycle,
    comparison: decision,
    pairs_evaluated: state.evaluated,
    pairs_recorded: run.trials.length,
    plan_digest: run.plan.plan_digest,
    ...(run.rebound ? {superseded_plan_digest: run.rebound} : {}),
  };
}

/** Drive a prepared run to where its decision or its units stop it (each pair sealed as it is committed). */
export async function drive(run: Run, source: PairSource): Promise<EvaluateResult> {
  return driveLoop(run, source);
}
