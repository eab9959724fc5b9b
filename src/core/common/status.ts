import {releaseStatus, type ScopeSummary} from '../release/release-query.js';
import {approvalWindowOf, rollbackStatus, type ExecutionView} from '../rollback/rollback-records.js';
import {evidenceSummary} from '../inspection/inspect.js';
import {LIFECYCLES, type Lifecycle} from '../../model/promotion/lifecycle.js';
import type {CandidateRecord, ComparisonResult} from '../../model/promotion/records.js';
import type {ScenarioStore} from '../../store/index.js';
import {now, openKnowledge, type StoreOptions} from './store-options.js';
import {historyState, readRecordHistory} from '../../store/kinds/promotion/record-history.js';
import {readNegativeResult} from '../../store/kinds/promotion/negative-result.js';
import {readEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {readActive} from '../../store/kinds/promotion/active-pointer.js';
import {listCandidateDigests, readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {scenarioDivergences} from '../../store/kinds/promotion/divergence.js';
import {describeArms, type ArmScores} from '../../stats/describe.js';
import type {GuardrailVerdict} from '../../model/promotion/guardrails.js';
import {guardrailVerdicts} from '../promotion/guardrail-gate.js';
import {readTrialObservations} from '../../store/kinds/evaluation/trial-observations.js';
import {summarizeObservations, type ObservedSummary} from '../evaluation/observed/summary.js';

/** One candidate as status shows it: where it stands, what its comparison says, and since when. */
export interface CandidateStatus {
  bundle_digest: string;
  lifecycle: Lifecycle;
  decision: ComparisonResult['decision'] | null;
  mean_effect: number | null;
  confidence_low: number | null;
  confidence_high: number | null;
  pairs: number;
  /** Each arm's absolute mean score with its interval, from the recorded pairs (null before any). */
  arms: ArmScores | null;
  /**
   * The plan's promotion guardrails: the verdicts recorded with its promotion, or what the gate would answer now
   * (null: the plan binds none).
   */
  guardrails: GuardrailVerdict[] | null;
  /** Each arm's metrics (median, p90, mean of latency, tokens, cost) and checks, when the evaluator observed any. */
  observed: ObservedSummary | null;
  /** The rationale of the record's latest change (a screen's, a rejection's, a promotion's). */
  rationale: string;
  /** The proposer's rationale, kept through every later change; null when no record of the proposal is left. */
  proposal_rationale: string | null;
  updated_at: string;
}

export interface ScenarioStatus {
  scenario: string;
  active: {
    bundle_digest: string;
    evaluator_epoch: string;
    rollback_target_digest: string | null;
    promotion_id: string | null;
  } | null;
  candidates: Partial<Record<Lifecycle, string[]>>;
  /** Every candidate, the most recently changed first. */
  details: CandidateStatus[];
  /** What an interrupted command left that autoctx repair (or the same command again) completes. */
  repairable: string[];
  /**
   * States that two clones' merged histories left (no interrupted command leaves them), each naming its two files:
   * repair refuses them (DIVERGED_WAY_OUT says the way out). While any is listed, `repairable` is empty.
   */
  diverged: string[];
  /** Each release scope's releases and states (empty when the scenario names no release). */
  releases: ScopeSummary[];
  /** Emergency rollbacks awaiting their second approver, and those whose window closed unapproved. */
  rollbacks: ExecutionView[];
  /** This machine's delivery evidence packages of the scenario, and their latest inspections. */
  evidence: {packages: number; uninspected: number; verdicts: Record<string, number>};
}

export interface StatusResult {
  status: 'ok';
  scenarios: ScenarioStatus[];
}

/**
 * What an interrupted command left behind for this candidate that repair
 * completes, found cheaply (status reads each record and at most its
 * evidence and negative result; verify is the full check), or null.
 */
function interrupted(
  store: ScenarioStore,
  digest: string,
  record: CandidateRecord,
  active: string | null,
): string | null {
  if (historyState(store, digest, record, null).kind === 'behind')
    return 'its record is one change behind its history (a write cut short)';
  if (active === digest && record.lifecycle !== 'active')
    return `it serves but its record says ${record.lifecycle} (a pointer move cut short)`;
  if (active !== null && active !== digest && record.lifecycle === 'active')
    return 'its record says active but another bundle serves (a pointer move cut short)';
  const terminalOrServing =
    record.lifecycle === 'rejected' || record.lifecycle === 'active' || record.lifecycle === 'superseded';
  if (!terminalOrServing && readNegativeResult(store, digest))
    return 'a rejection cut short between its negative result and its record';
  if (!terminalOrServing) {
    const evidence = readEvidence(store, digest);
    const recorded = record.comparison
      ? record.comparison.screen_pairs + record.comparison.confirmation_pairs + record.comparison.heldout_pairs
      : 0;
    if (evidence && !evidence.legacy && evidence.trials.length > recorded)
      return `its record counts ${recorded} pairs but its evidence holds ${evidence.trials.length} (a run cut short)`;
  }
  return null;
}

/** What the proposer gave as the reason: the proposed record's rationale (the record's, or its history's first). */
function proposalRationale(store: ScenarioStore, record: CandidateRecord): string | null {
  if (record.lifecycle === 'proposed') return record.rationale;
  const first = readRecordHistory(store, record.bundle_digest)[0]?.record;
  return first?.lifecycle === 'proposed' ? first.rationale : null;
}

/** The active pointer and the bundles by lifecycle, for one scenario or all. */
export function status(options: StoreOptions): StatusResult {
  const knowledge = openKnowledge(options);
  const names =
    options.scenario !== undefined ? [knowledge.resolveScenario(options.scenario)] : knowledge.listScenarios();
  const windowDays = approvalWindowOf(knowledge, true);
  const at = now(options);
  const scenarios = names.map((name): ScenarioStatus => {
    const store = knowledge.scenario(name);
    const a = readActive(store);
    const candidates: Partial<Record<Lifecycle, string[]>> = {};
    const details: CandidateStatus[] = [];
    const repairable: string[] = [];
    for (const digest of listCandidateDigests(store)) {
      const record = readRecord(store, digest);
      if (!record) continue;
      (candidates[record.lifecycle] ??= []).push(digest);
      const c = record.comparison;
      const trials = c ? (readEvidence(store, digest)?.trials ?? []) : [];
      details.push({
        bundle_digest: digest,
        lifecycle: record.lifecycle,
        decision: c?.decision ?? null,
        mean_effect: c?.mean_effect ?? null,
        confidence_low: c?.confidence_low ?? null,
        confidence_high: c?.confidence_high ?? null,
        pairs: c ? c.screen_pairs + c.confirmation_pairs + c.heldout_pairs : 0,
        arms: c ? describeArms(trials) : null,
        observed: c ? summarizeObservations(trials, readTrialObservations(store, digest)) : null,
        guardrails: c ? guardrailVerdicts(store, digest) : null,
        rationale: record.rationale,
        proposal_rationale: proposalRationale(store, record),
        updated_at: record.updated_at,
      });
      const why = interrupted(store, digest, record, a?.bundle_digest ?? null);
      if (why) repairable.push(`${digest}: ${why}`);
    }
    details.sort((x, y) =>
      x.updated_at < y.updated_at ? 1 : x.updated_at > y.updated_at ? -1 : x.bundle_digest < y.bundle_digest ? -1 : 1,
    );
    // A merge of two clones is no interrupted command: repair completes nothing across it.
    const divergences = scenarioDivergences(store);
    const diverged = divergences.map((d) => d.message);
    // A scope whose receipts fork is listed under diverged, not read as one side's registry.
    const forkedScopes = new Set(divergences.flatMap((d) => (d.scope !== undefined ? [d.scope] : [])));
    const releases = a ? releaseStatus(store, forkedScopes) : [];
    for (const r of releases)
      if (r.registry_pending)
        repairable.push(
          `release registry of scope ${r.scope}: one transition behind its receipts (a transition cut short)`,
        );
    if (diverged.length > 0) repairable.splice(0);
    const ordered: Partial<Record<Lifecycle, string[]>> = {};
    for (const l of LIFECYCLES) if (candidates[l]) ordered[l] = candidates[l];
    return {
      scenario: name,
      active: a
        ? {
            bundle_digest: a.bundle_digest,
            evaluator_epoch: a.evaluator_epoch,
            rollback_target_digest: a.rollback_target_digest,
            promotion_id: a.promotion_id,
          }
        : null,
      candidates: ordered,
      details,
      repairable,
      diverged,
      releases,
      rollbacks: rollbackStatus(store, at, windowDays),
      evidence: evidenceSummary(knowledge.state(), name),
    };
  });
  return {status: 'ok', scenarios};
}
