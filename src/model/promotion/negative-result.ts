import {stableDigest} from '../../canonical/index.js';
import {pythonFloatRepr} from '../common/python-float.js';
import type {MatchedTrial} from '../evaluation/trial.js';
import type {ComparisonResult} from './records.js';

export type NegativeKind = 'rejected' | 'inconclusive' | 'false-promotion-blocked' | 'stale-incumbent';

export interface ReservationBinding {
  path: string;
  digest: string;
  reservation: {status: string; allocated_alpha: number; evidence_digest: string | null};
}

export interface NegativeResultArgs {
  scenario: string;
  digest: string;
  evaluator_epoch: string;
  cohort: string | null;
  kind: NegativeKind;
  reason: string;
  comparison: ComparisonResult | null;
  trials: readonly MatchedTrial[];
  evidence_binding_digest: string | null;
  confirmation_policy_digest: string | null;
  plan_digest: string | null;
  /**
   * A blocked campaign's reservation artifact (its path relative to the knowledge root) and the reservation it holds.
   */
  reservation_artifact?: ReservationBinding | undefined;
  /** The record's created_at: upstream writes it as both the entry's occurred_at and the ledger's generated_at. */
  occurred_at: string;
}

function roundTo6(x: number): number {
  return Number(x.toFixed(6));
}

/**
 * negative_result.json: the reference's NegativeResultLedger (schema 2) with
 * one entry bound to the exact bundle, epoch, cohort, seeds, probes and the
 * evidence and plan digests.
 */
export function createNegativeResult(a: NegativeResultArgs): Record<string, unknown> {
  const resultId = `context-bundle-${a.digest}-${a.kind}`;
  const failureKind =
    a.kind === 'false-promotion-blocked' ||
    a.kind === 'stale-incumbent' ||
    a.kind === 'inconclusive' ||
    a.reason.includes('validity')
      ? 'verification_failed'
      : 'score_regression';
  const base = `${a.scenario}/context_bundles/candidates/${a.digest}`;
  const refs: Array<{uri: string; summary: string}> = [];
  if (a.evidence_binding_digest !== null) {
    refs.push({
      uri: `${base}/matched_trials.json#sha256=${a.evidence_binding_digest}`,
      summary:
        `Persisted matched candidate/incumbent evaluation pairs; ` +
        `confirmation_policy_sha256=${a.confirmation_policy_digest ?? 'none'}.`,
    });
  }
  if (a.reservation_artifact) {
    // Upstream's wording. Its URI is the artifact's absolute path; ours is relative to the knowledge root, so it
    // survives a clone.
    const {path, digest, reservation} = a.reservation_artifact;
    const summary =
      `Campaign reservation status=${reservation.status}; reservation_sha256=${stableDigest(reservation)}; ` +
      `allocated_alpha=${pythonFloatRepr(reservation.allocated_alpha)}; ` +
      `trial_evidence_sha256=${reservation.evidence_digest}.`;
    refs.push({uri: `${path}#sha256=${digest}`, summary});
  }
  if (a.plan_digest !== null)
    refs.push({
      uri: `${base}/evaluator_plan.json#sha256=${a.plan_digest}`,
      summary: 'Immutable score, validity, routing, executor, and fixture plan.',
    });
  const entry = {
    result_id: resultId,
    branch_id: a.digest,
    failure_kind: failureKind,
    disposition: 'caution',
    reason: a.reason,
    score_delta: a.comparison?.mean_effect == null ? null : roundTo6(a.comparison.mean_effect),
    evaluated_seeds: a.trials.map((t) => String(t.seed)),
    evaluated_probes: a.trials.map((t) => t.fixture),
    evidence_refs: refs,
    applicability_scope: 'exact_bundle',
    context: {
      scenario_name: a.scenario,
      context_bundle_digest: a.digest,
      context_bundle_family: null,
      evaluator_epoch: a.evaluator_epoch,
      verifier_digest: null,
      trial_cohort: a.cohort,
      component_dependencies: [],
      environment_fingerprint: null,
    },
    occurred_at: a.occurred_at,
    branch_lineage: [],
    hypothesis_node_id: null,
    generation_index: null,
    evidence_expires_at: null,
    safety_policy_authority: null,
    retest_of_result_id: null,
    retest_outcome: null,
    superseded_by_result_id: null,
  };
  return {
    schema_version: 2,
    run_id: `context-bundle:${a.digest}`,
    generated_at: a.occurred_at,
    entries: [entry],
    failure_mode_summary: [{failure_kind: failureKind, disposition: 'caution', count: 1, result_ids: [resultId]}],
  };
}
