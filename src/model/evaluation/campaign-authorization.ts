/** Authorizing (or blocking) a confirmed candidate under its campaign reservation. */
import {sha256Hex, stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {evaluateMatchedTrials, pairKeysOf, type ComparisonSubject} from './comparison.js';
import {confirmationPolicyDigest, type ConfirmationPolicy} from './policy.js';
import type {ComparisonResult} from '../promotion/records.js';
import {canonicalTrialJson, matchedTrialPairKey, type MatchedTrial} from './trial.js';
import type {CampaignFalsePromotionPolicy} from './campaign-policy.js';
import {
  type CandidateRiskReservation,
  type CandidateFixtureReservation,
  fixturePlanDigest,
} from './campaign-reservations.js';
import {evaluateCampaignEvidence, type CampaignEvidenceResult} from './campaign-blocks.js';

/** Digest of the evidence a campaign decision binds: every trial, sorted by pair key. */
export function riskEvidenceDigest(trials: readonly MatchedTrial[], keys?: readonly string[]): string {
  const rows = trials.map((t, i) => {
    const key = keys ? keys[i]! : matchedTrialPairKey(t);
    return {key, json: canonicalTrialJson(t, key)};
  });
  rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return sha256Hex(`[${rows.map((r) => r.json).join(',')}]`);
}

/**
 * Authorize (or block) a confirmed candidate under its campaign reservation.
 * Integrity problems throw: a comparison the evidence does not reproduce,
 * several cohorts, another lineage, a policy other than the reserved one, a
 * trial outside the reserved plan or with a relabeled lane, a forged plan
 * digest, a non-boolean validity flag. A terminal reservation returns its
 * stored decision, for the same evidence only.
 */
export function authorizeCampaignPromotion(args: {
  candidate: ComparisonSubject;
  comparison: ComparisonResult;
  trials: readonly MatchedTrial[];
  confirmation_policy: ConfirmationPolicy;
  campaign_policy: CampaignFalsePromotionPolicy;
  reservation: CandidateRiskReservation;
  fixture_reservation: CandidateFixtureReservation;
}): CampaignEvidenceResult & {reservation: CandidateRiskReservation} {
  const {candidate, comparison, trials, reservation, fixture_reservation: plan} = args;
  if (comparison.decision !== 'confirmed')
    fail('INTEGRITY', 'false-promotion authorization requires a confirmed comparison');
  for (const t of trials) {
    if (typeof t.candidate_valid !== 'boolean' || typeof t.incumbent_valid !== 'boolean')
      fail('INTEGRITY', 'matched evidence has a non-boolean validity flag');
  }
  const keys = pairKeysOf(trials);
  const replayed = evaluateMatchedTrials(candidate, trials, args.confirmation_policy, keys);
  if (stableDigest(replayed) !== stableDigest(comparison))
    fail('INTEGRITY', 'false-promotion evidence does not reproduce its confirmed comparison');
  if (new Set(trials.map((t) => t.cohort)).size !== 1)
    fail('INTEGRITY', 'false-promotion evidence must use exactly one trial cohort');
  if (
    reservation.candidate_digest !== candidate.digest ||
    reservation.incumbent_digest !== candidate.parent_digest ||
    reservation.evaluator_epoch !== candidate.evaluator_epoch ||
    reservation.campaign_id === ''
  ) {
    fail('INTEGRITY', 'candidate lineage does not match its false-promotion reservation');
  }
  if (plan.candidate_digest !== candidate.digest || plan.campaign_id !== reservation.campaign_id)
    fail('INTEGRITY', 'candidate has no durable campaign fixture reservation');
  if (fixturePlanDigest(plan) !== plan.plan_digest)
    fail('INTEGRITY', 'campaign fixture reservation plan digest does not match its units');
  const planned = new Map(plan.units.map((u) => [`${u.fixture_digest}\u0000${u.seed}`, u.lane]));
  for (const t of trials) {
    if (t.candidate_digest !== plan.candidate_digest)
      fail('INTEGRITY', 'matched evidence candidate differs from its fixture reservation');
    if (t.evaluator_epoch !== plan.evaluator_epoch || t.cohort !== plan.cohort)
      fail('INTEGRITY', 'matched evidence lineage differs from its fixture reservation');
    const lane = planned.get(`${t.fixture_digest}\u0000${t.seed}`);
    if (lane === undefined) fail('INTEGRITY', 'matched evidence contains a fixture outside its reserved plan');
    if (lane !== t.lane) fail('INTEGRITY', 'matched evidence relabels a reserved fixture lane');
  }
  if (confirmationPolicyDigest(args.confirmation_policy) !== reservation.confirmation_policy_digest)
    fail('INTEGRITY', 'promotion evidence used a policy different from its risk reservation');
  const evidenceDigest = riskEvidenceDigest(trials, keys);
  if (reservation.status !== 'reserved') {
    if (reservation.evidence_digest !== evidenceDigest)
      fail('INTEGRITY', 'terminal false-promotion reservation cannot be rebound to new evidence');
    return {
      authorized: reservation.status === 'authorized',
      reason: reservation.reason ?? 'persisted false-promotion decision',
      independent_confirmation_blocks: reservation.independent_confirmation_blocks,
      independent_heldout_blocks: reservation.independent_heldout_blocks,
      reservation,
    };
  }
  const gate = evaluateCampaignEvidence(trials, args.confirmation_policy, args.campaign_policy);
  return {
    ...gate,
    reservation: {
      ...reservation,
      status: gate.authorized ? 'authorized' : 'blocked',
      reason: gate.reason,
      evidence_digest: evidenceDigest,
      independent_confirmation_blocks: gate.independent_confirmation_blocks,
      independent_heldout_blocks: gate.independent_heldout_blocks,
    },
  };
}
