/**
 * What a campaign reserves for a candidate before anything about it is observed: its alpha, its fixture plan, and the
 * campaign's state.
 */
import {sha256Hex, stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {requiredConfidenceZ} from '../../stats/required-z.js';
import type {ComparisonSubject} from './comparison.js';
import {confirmationPolicyDigest, validateConfirmationPolicy, type ConfirmationPolicy} from './policy.js';
import {jsonNumber, jsonString, type TrialLane} from './trial.js';
import {
  campaignAdjustedConfirmationPolicy,
  campaignAlphaForCandidate,
  type CampaignFalsePromotionPolicy,
} from './campaign-policy.js';

export type FalsePromotionStatus = 'reserved' | 'authorized' | 'rejected' | 'inconclusive' | 'blocked';

export interface CandidateRiskReservation {
  campaign_id: string;
  candidate_digest: string;
  incumbent_digest: string;
  evaluator_epoch: string;
  candidate_index: number;
  allocated_alpha: number;
  required_confidence_z: number;
  confirmation_policy_digest: string;
  status: FalsePromotionStatus;
  reason: string | null;
  evidence_digest: string | null;
  independent_confirmation_blocks: number;
  independent_heldout_blocks: number;
}

/** Reserve alpha for the next candidate, before anything about it is observed. */
export function createCandidateRiskReservation(args: {
  campaign_id: string;
  candidate: ComparisonSubject;
  candidate_index: number;
  policy: CampaignFalsePromotionPolicy;
  base_policy: ConfirmationPolicy;
}): {reservation: CandidateRiskReservation; confirmation_policy: ConfirmationPolicy} {
  if (args.candidate.parent_digest === null)
    fail('INVALID_INPUT', 'false-promotion control requires a candidate incumbent');
  const allocated = campaignAlphaForCandidate(args.policy, args.candidate_index);
  const z = requiredConfidenceZ(allocated);
  const effective = campaignAdjustedConfirmationPolicy(validateConfirmationPolicy(args.base_policy), z);
  return {
    confirmation_policy: effective,
    reservation: {
      campaign_id: args.campaign_id,
      candidate_digest: args.candidate.digest,
      incumbent_digest: args.candidate.parent_digest,
      evaluator_epoch: args.candidate.evaluator_epoch,
      candidate_index: args.candidate_index,
      allocated_alpha: allocated,
      required_confidence_z: z,
      confirmation_policy_digest: confirmationPolicyDigest(effective),
      status: 'reserved',
      reason: null,
      evidence_digest: null,
      independent_confirmation_blocks: 0,
      independent_heldout_blocks: 0,
    },
  };
}

export interface CampaignFixtureUnit {
  lane: TrialLane;
  fixture_digest: string;
  seed: number;
}

export interface CandidateFixtureReservation {
  campaign_id: string;
  candidate_digest: string;
  evaluator_epoch: string;
  cohort: string;
  units: CampaignFixtureUnit[];
  plan_digest: string;
}

/** Digest of a fixture plan, its canonical JSON written directly (plans hold thousands of units). */
export function fixturePlanDigest(r: Omit<CandidateFixtureReservation, 'plan_digest'>): string {
  const units = r.units.map(
    (u) =>
      `{"fixture_digest":${jsonString(u.fixture_digest, 'fixture_digest')},"lane":` +
      `${jsonString(u.lane, 'lane')},"seed":${jsonNumber(u.seed, 'seed')}}`,
  );
  return sha256Hex(
    `{"campaign_id":${jsonString(r.campaign_id, 'campaign_id')},"candidate_digest":` +
      `${jsonString(r.candidate_digest, 'candidate_digest')},"cohort":${jsonString(r.cohort, 'cohort')},"ev` +
      `aluator_epoch":${jsonString(r.evaluator_epoch, 'evaluator_epoch')},"units":[${units.join(',')}]}`,
  );
}

export function createCandidateFixtureReservation(
  args: Omit<CandidateFixtureReservation, 'plan_digest'>,
): CandidateFixtureReservation {
  const units = args.units.map((u) => ({lane: u.lane, fixture_digest: u.fixture_digest, seed: u.seed}));
  const seen = new Set<string>();
  for (const u of units) {
    const key = `${u.fixture_digest}\u0000${u.seed}`;
    if (seen.has(key)) fail('INVALID_INPUT', 'fixture plan repeats a (fixture_digest, seed) unit');
    seen.add(key);
  }
  const body = {
    campaign_id: args.campaign_id,
    candidate_digest: args.candidate_digest,
    evaluator_epoch: args.evaluator_epoch,
    cohort: args.cohort,
    units,
  };
  return {...body, plan_digest: fixturePlanDigest(body)};
}

export interface CampaignFalsePromotionState {
  schema_version: 2;
  campaign_id: string;
  policy: CampaignFalsePromotionPolicy;
  reservations: CandidateRiskReservation[];
  fixture_reservations: CandidateFixtureReservation[];
  fixture_history_complete: boolean;
  state_digest: string;
}

export function createCampaignFalsePromotionState(
  args: Omit<CampaignFalsePromotionState, 'schema_version' | 'state_digest'>,
): CampaignFalsePromotionState {
  const body = {
    schema_version: 2 as const,
    campaign_id: args.campaign_id,
    policy: args.policy,
    reservations: args.reservations,
    fixture_reservations: args.fixture_reservations,
    fixture_history_complete: args.fixture_history_complete,
  };
  return {...body, state_digest: stableDigest(body)};
}
