import type {ContextBundle} from '../../model/bundle/bundle.js';
import type {NegativeKind, ReservationBinding} from '../../model/promotion/negative-result.js';
import type {CandidateRecord, ComparisonResult} from '../../model/promotion/records.js';
import type {RecordCause} from '../../model/promotion/record-history.js';
import {pausePoint, type ScenarioStore} from '../../store/index.js';
import {fail} from '../../errors.js';
import {commandActor} from '../common/actor.js';
import {negativeResultFor} from './negative.js';
import {activePlaces, withdrawRelease} from '../release/serving.js';
import {writeNegativeResult} from '../../store/kinds/promotion/negative-result.js';
import {readRecord, writeRecord} from '../../store/kinds/promotion/candidate-record.js';

/** Why a candidate ends: the negative result's kind and reason, and what its record says. */
export interface Rejection {
  kind: NegativeKind;
  /** The negative result's reason. */
  reason: string;
  /** The record's rationale (default: the reason). */
  rationale?: string;
  /** ISO timestamp of the decision. */
  at: string;
  comparison?: ComparisonResult | null;
  reservationArtifact?: ReservationBinding;
  /** Who ends what serves the bundle (default: the command's signer in a signed tree, else resolveActor's default). */
  actor?: () => string;
}

/**
 * The first half of "reject with a negative result". A rejected bundle never
 * serves: one that serves as ACTIVE (active.json, or a scope's own ACTIVE) is
 * refused before anything is written (only a rollback stops an ACTIVE); its
 * release's CANARY and SHADOW, in every scope, are ended first, each with its
 * receipt; then the negative result (and its discoverable copy), bound to the
 * candidate's evidence as it is on disk. Under the scenario lock. Returns the
 * evidence binding digest.
 */
export function writeRejection(
  store: ScenarioStore,
  candidate: ContextBundle,
  record: CandidateRecord,
  r: Rejection,
): string | null {
  const serving = activePlaces(store, candidate.digest);
  if (serving.length > 0)
    fail(
      'INVALID_TRANSITION',
      `bundle ${candidate.digest} serves (${serving.join('; ')}): a rejected bundle never serves, use ` +
        `autoctx rollback to stop serving it; nothing was changed`,
      {bundle_digest: candidate.digest},
    );
  withdrawRelease(store, candidate.digest, {
    rationale: `withdrawn: its candidate is rejected (${r.reason})`,
    at: r.at,
    actor: r.actor ?? commandActor(store, undefined),
  });
  const negative = negativeResultFor(store, candidate, record, r.kind, r.reason, {
    ...(r.comparison !== undefined ? {comparison: r.comparison} : {}),
    ...(r.reservationArtifact ? {reservation_artifact: r.reservationArtifact} : {}),
  });
  writeNegativeResult(store, candidate.digest, negative.document);
  return negative.evidenceDigest;
}

/** The second half: the record, re-read under the lock, becomes `rejected` (once). Returns the record as it stands. */
export function markRejected(
  store: ScenarioStore,
  digest: string,
  r: Pick<Rejection, 'reason' | 'rationale' | 'at'>,
  cause: RecordCause,
): CandidateRecord {
  const current = readRecord(store, digest)!;
  if (current.lifecycle === 'rejected') return current;
  const updated: CandidateRecord = {
    ...current,
    lifecycle: 'rejected',
    rationale: r.rationale ?? r.reason,
    updated_at: r.at,
  };
  return writeRecord(store, updated, cause);
}

/**
 * Reject with a negative result: the negative result first, then the record.
 * A crash between them leaves a negative result beside a live record, which
 * the same command run again completes. Under the scenario lock.
 */
export function rejectWithNegativeResult(
  store: ScenarioStore,
  candidate: ContextBundle,
  record: CandidateRecord,
  r: Rejection,
  cause: RecordCause,
): CandidateRecord {
  writeRejection(store, candidate, record, r);
  pausePoint('rejection:negative-written');
  return markRejected(store, candidate.digest, r, cause);
}
