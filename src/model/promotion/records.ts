import {stableDigest} from '../../canonical/index.js';
import type {Lifecycle} from './lifecycle.js';
import type {ConfirmationPolicy} from '../evaluation/policy.js';

/** The outcome of evaluate_matched_trials, as stored in records and promotions. */
export interface ComparisonResult {
  decision: 'needs_screen' | 'needs_confirmation' | 'needs_heldout' | 'confirmed' | 'rejected' | 'inconclusive';
  reason: string;
  screen_pairs: number;
  confirmation_pairs: number;
  heldout_pairs: number;
  mean_effect: number | null;
  confidence_low: number | null;
  confidence_high: number | null;
}

/** candidates/<digest>/record.json (schema 2; schema 1 lacks the policy fields). */
export interface CandidateRecord {
  schema_version: 1 | 2;
  bundle_digest: string;
  parent_digest: string | null;
  evaluator_epoch: string;
  lifecycle: Lifecycle;
  source_run_id: string;
  source_generation: number;
  created_at: string;
  updated_at: string;
  rationale: string;
  comparison: ComparisonResult | null;
  confirmation_policy?: ConfirmationPolicy | null;
  confirmation_policy_digest?: string | null;
}

/** context_bundles/active.json: the serving pointer. */
export interface ActivePointer {
  schema_version: 1;
  bundle_digest: string;
  evaluator_epoch: string;
  promotion_id: string | null;
  rollback_target_digest: string | null;
  activated_at: string;
  rationale: string;
  manifest_diff_digest?: string;
}

/** promotions/<promotion_id>.json */
export interface PromotionRecord {
  schema_version: 1;
  promotion_id: string;
  candidate_digest: string;
  incumbent_digest: string;
  rollback_target_digest: string;
  evaluator_epoch: string;
  cohort: string;
  rationale: string;
  comparison: ComparisonResult;
  confirmation_policy: ConfirmationPolicy;
  confirmation_policy_digest: string;
  manifest_diff_digest: string;
  promoted_at: string;
}

/** rollbacks/<rollback_id>.json: autoctx's record of one pointer move back. */
export interface RollbackRecord {
  schema_version: 1;
  rollback_id: string;
  scenario: string;
  from_digest: string;
  to_digest: string;
  from_activated_at: string;
  evaluator_epoch: string;
  rationale: string;
  rolled_back_at: string;
}

/** Timestamps in the reference's spelling: ISO 8601, microseconds, explicit UTC offset. */
export function isoTimestamp(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}

/** A rollback is identified by the pointer state it moves away from, so a re-run after a crash finds it again. */
export function rollbackId(from: string, fromActivatedAt: string, to: string): string {
  return stableDigest({from_activated_at: fromActivatedAt, from_digest: from, to_digest: to}).slice(0, 32);
}

/**
 * rollovers/<rollover_id>.json: autoctx's record of one evaluator-epoch rollover (the Python implementation writes
 * none).
 */
export interface RolloverRecord {
  schema_version: 1;
  rollover_id: string;
  scenario: string;
  from_digest: string;
  from_activated_at: string;
  from_evaluator_epoch: string;
  to_digest: string;
  evaluator_epoch: string;
  rolled_over_at: string;
}

/** A rollover is identified by the pointer state it moves away from and the epoch it moves to. */
export function rolloverId(from: string, fromActivatedAt: string, epoch: string): string {
  return stableDigest({
    evaluator_epoch: epoch,
    from_activated_at: fromActivatedAt,
    from_digest: from,
    kind: 'rollover',
  }).slice(0, 32);
}

/** The rationale active.json carries after a rollover, in the Python implementation's words. */
export function rolloverRationale(fromEpoch: string): string {
  return `evaluator epoch rollover from ${fromEpoch}`;
}
