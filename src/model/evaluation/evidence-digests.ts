import {stableDigest} from '../../canonical/index.js';

/** Digest of an evaluator plan: the `plan` object itself. */
export function evaluatorPlanDigest(plan: unknown): string {
  return stableDigest(plan);
}

/** Binding digest of a schema-2 matched-trials envelope: its semantic content, not its bytes. */
export function matchedEvidenceDigest(e: {
  trials: unknown;
  confirmation_policy: unknown;
  confirmation_policy_digest: unknown;
}): string {
  return stableDigest({
    schema_version: 2,
    trials: e.trials,
    confirmation_policy: e.confirmation_policy,
    confirmation_policy_digest: e.confirmation_policy_digest,
  });
}

/** Digest of a campaign risk ledger (schema 2). */
export function campaignStateDigest(s: {
  campaign_id: unknown;
  policy: unknown;
  reservations: unknown;
  fixture_reservations?: unknown;
  fixture_history_complete?: unknown;
}): string {
  return stableDigest({
    schema_version: 2,
    campaign_id: s.campaign_id,
    policy: s.policy,
    reservations: s.reservations,
    fixture_reservations: s.fixture_reservations ?? [],
    fixture_history_complete: s.fixture_history_complete ?? false,
  });
}

/** Digest of a schema-1 campaign ledger (no fixture history). */
export function legacyCampaignStateDigest(s: {campaign_id: unknown; policy: unknown; reservations: unknown}): string {
  return stableDigest({schema_version: 1, campaign_id: s.campaign_id, policy: s.policy, reservations: s.reservations});
}

/** Digest of an immutable reservation artifact. */
export function reservationArtifactDigest(a: {
  campaign_id: unknown;
  risk_reservation: unknown;
  fixture_reservation: unknown;
}): string {
  return stableDigest({
    schema_version: 1,
    campaign_id: a.campaign_id,
    risk_reservation: a.risk_reservation,
    fixture_reservation: a.fixture_reservation,
  });
}
