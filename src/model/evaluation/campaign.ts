import {compareUtf16, sha256Hex, stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {ExactSum} from '../../stats/exact-sum.js';
import {ExactMoments} from '../../stats/exact-moments.js';
import {intervalFromMoments, twoSidedTail} from '../../stats/interval.js';
import {powInt} from '../../stats/pow-int.js';
import {requiredConfidenceZ} from '../../stats/required-z.js';
import {log} from '../../stats/special/log.js';
import {BettingTest, bettingTestRejects} from '../../stats/betting.js';
import {evaluateMatchedTrials, pairKeysOf, type ComparisonSubject} from './comparison.js';
import {confirmationPolicyDigest, validateConfirmationPolicy, type ConfirmationPolicy} from './policy.js';
import type {ComparisonResult} from '../promotion/records.js';
import {canonicalTrialJson, jsonNumber, jsonString, matchedTrialPairKey, trialDelta, type MatchedTrial, type TrialLane} from './trial.js';

export const ROBUST_METHODS = ['cluster_t', 'bounded_hoeffding', 'bounded_betting'] as const;
export type RobustMethod = (typeof ROBUST_METHODS)[number];

/** A summable alpha-spending policy over every candidate of a campaign. */
export interface CampaignFalsePromotionPolicy {
  familywise_alpha: number;
  allocation_decay: number;
  min_independent_confirmation_blocks: number;
  require_disjoint_lane_blocks: boolean;
  robust_method: RobustMethod;
  effect_lower_bound: number;
  effect_upper_bound: number;
}

export const DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY: Readonly<CampaignFalsePromotionPolicy> = Object.freeze({
  familywise_alpha: 0.05,
  allocation_decay: 0.5,
  min_independent_confirmation_blocks: 2,
  require_disjoint_lane_blocks: true,
  robust_method: 'cluster_t',
  effect_lower_bound: -1.0,
  effect_upper_bound: 1.0,
});

const POLICY_KEYS = Object.keys(DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY).sort();

export function validateCampaignPolicy(value: unknown): CampaignFalsePromotionPolicy {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('SCHEMA_VIOLATION', 'campaign policy must be an object');
  const p = value as Record<string, unknown>;
  const extra = Object.keys(p).filter((k) => !POLICY_KEYS.includes(k));
  if (extra.length) fail('SCHEMA_VIOLATION', `campaign policy has unknown keys: ${extra.join(', ')}`);
  const unit = (k: string) => {
    const v = p[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || !(v > 0 && v < 1)) fail('SCHEMA_VIOLATION', `campaign policy ${k} must be finite and between zero and one`);
    return v;
  };
  const blocks = p.min_independent_confirmation_blocks;
  if (typeof blocks !== 'number' || !Number.isSafeInteger(blocks) || blocks < 2) fail('SCHEMA_VIOLATION', 'min_independent_confirmation_blocks must be an integer of at least two');
  if (typeof p.require_disjoint_lane_blocks !== 'boolean') fail('SCHEMA_VIOLATION', 'require_disjoint_lane_blocks must be a boolean');
  if (!(ROBUST_METHODS as readonly unknown[]).includes(p.robust_method)) fail('SCHEMA_VIOLATION', `robust_method must be one of ${ROBUST_METHODS.join(', ')}`);
  const lo = p.effect_lower_bound;
  const hi = p.effect_upper_bound;
  if (typeof lo !== 'number' || typeof hi !== 'number' || !Number.isFinite(lo) || !Number.isFinite(hi) || lo >= hi) fail('SCHEMA_VIOLATION', 'effect bounds must be finite and increasing');
  return {
    familywise_alpha: unit('familywise_alpha'),
    allocation_decay: unit('allocation_decay'),
    min_independent_confirmation_blocks: blocks,
    require_disjoint_lane_blocks: p.require_disjoint_lane_blocks,
    robust_method: p.robust_method as RobustMethod,
    effect_lower_bound: lo,
    effect_upper_bound: hi,
  };
}

/** α_i = A·(1 − d)·d^i: the allocations sum to at most A however many candidates come. */
export function campaignAlphaForCandidate(policy: CampaignFalsePromotionPolicy, candidateIndex: number): number {
  if (!Number.isSafeInteger(candidateIndex) || candidateIndex < 0) fail('INVALID_INPUT', 'candidate_index must be a non-negative integer');
  const allocated = policy.familywise_alpha * (1.0 - policy.allocation_decay) * powInt(policy.allocation_decay, candidateIndex);
  if (allocated === 0.0) fail('INVALID_INPUT', 'campaign alpha allocation underflowed; no further promotion can be authorized');
  return allocated;
}

export {requiredConfidenceZ};

/** The base policy with confidence_z raised to the campaign's required z. */
export function campaignAdjustedConfirmationPolicy(base: ConfirmationPolicy, requiredZ: number): ConfirmationPolicy {
  return {...base, confidence_z: Math.max(base.confidence_z, requiredZ)};
}

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
  if (args.candidate.parent_digest === null) fail('INVALID_INPUT', 'false-promotion control requires a candidate incumbent');
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
  const units = r.units.map((u) => `{"fixture_digest":${jsonString(u.fixture_digest, 'fixture_digest')},"lane":${jsonString(u.lane, 'lane')},"seed":${jsonNumber(u.seed, 'seed')}}`);
  return sha256Hex(
    `{"campaign_id":${jsonString(r.campaign_id, 'campaign_id')},"candidate_digest":${jsonString(r.candidate_digest, 'candidate_digest')},"cohort":${jsonString(r.cohort, 'cohort')},"evaluator_epoch":${jsonString(r.evaluator_epoch, 'evaluator_epoch')},"units":[${units.join(',')}]}`,
  );
}

export function createCandidateFixtureReservation(args: Omit<CandidateFixtureReservation, 'plan_digest'>): CandidateFixtureReservation {
  const units = args.units.map((u) => ({lane: u.lane, fixture_digest: u.fixture_digest, seed: u.seed}));
  const seen = new Set<string>();
  for (const u of units) {
    const key = `${u.fixture_digest}\u0000${u.seed}`;
    if (seen.has(key)) fail('INVALID_INPUT', 'fixture plan repeats a (fixture_digest, seed) unit');
    seen.add(key);
  }
  const body = {campaign_id: args.campaign_id, candidate_digest: args.candidate_digest, evaluator_epoch: args.evaluator_epoch, cohort: args.cohort, units};
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

export function createCampaignFalsePromotionState(args: Omit<CampaignFalsePromotionState, 'schema_version' | 'state_digest'>): CampaignFalsePromotionState {
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

export interface CampaignEvidenceResult {
  authorized: boolean;
  reason: string;
  independent_confirmation_blocks: number;
  independent_heldout_blocks: number;
}

type LaneBlocks = Record<TrialLane, Map<string, {seed: number; deltas: number[]}>>;

function laneBlocks(trials: readonly MatchedTrial[]): LaneBlocks {
  const blocks: LaneBlocks = {screen: new Map(), confirmation: new Map(), heldout: new Map()};
  for (const t of trials) {
    const lane = blocks[t.lane];
    const block = lane.get(t.fixture_digest);
    if (block) {
      block.deltas.push(trialDelta(t));
      block.seed = Math.min(block.seed, t.seed);
    } else lane.set(t.fixture_digest, {seed: t.seed, deltas: [trialDelta(t)]});
  }
  return blocks;
}

/**
 * Block means: one value per fixture (all of its seeds), the exactly rounded
 * mean, in evaluation order: by the block's smallest seed (seeds are assigned
 * in plan order), then fixture digest. The order is fixed before any score is
 * seen, which the betting test needs; the other methods do not depend on it.
 */
function blockMeans(blocks: Map<string, {seed: number; deltas: number[]}>): number[] {
  return [...blocks.entries()]
    .sort(([ka, a], [kb, b]) => a.seed - b.seed || compareUtf16(ka, kb))
    .map(([, block]) => {
    const values = block.deltas;
    const s = new ExactSum();
    for (const v of values) s.add(v);
    return s.value() / values.length;
  });
}

function lanesOverlap(b: LaneBlocks): boolean {
  for (const k of b.screen.keys()) if (b.confirmation.has(k) || b.heldout.has(k)) return true;
  for (const k of b.confirmation.keys()) if (b.heldout.has(k)) return true;
  return false;
}

function maxLooks(p: ConfirmationPolicy): number {
  return p.max_confirmation_pairs - p.min_confirmation_pairs + 1;
}

/**
 * Whether the confirmation-block effects clear the minimum effect under the
 * campaign's method, at the per-look alpha: the lower bound of the Student-t
 * interval over block means (cluster_t), the one-sided Hoeffding bound
 * (bounded_hoeffding), or the test by betting (bounded_betting; blocks taken in
 * evaluation order, see blockSeries). Every method spends its alpha equally
 * over the possible looks, so any stopping rule keeps the error at alpha.
 */
export function campaignBoundClears(effects: readonly number[], confirmation: ConfirmationPolicy, campaign: CampaignFalsePromotionPolicy): boolean {
  const looks = maxLooks(confirmation);
  if (campaign.robust_method === 'cluster_t') {
    const m = new ExactMoments();
    for (const e of effects) m.add(e);
    const low = intervalFromMoments(m, confirmation.confidence_z, looks).low;
    return low !== null && low > confirmation.min_effect;
  }
  const lookAlpha = twoSidedTail(confirmation.confidence_z) / looks;
  if (lookAlpha === 0.0) return false;
  if (campaign.robust_method === 'bounded_hoeffding') {
    const s = new ExactSum();
    for (const e of effects) s.add(e);
    const width = campaign.effect_upper_bound - campaign.effect_lower_bound;
    const low = s.value() / effects.length - width * Math.sqrt(log(1.0 / lookAlpha) / (2.0 * effects.length));
    return low > confirmation.min_effect;
  }
  // A minimum effect on or outside the declared bounds cannot be tested: fail closed.
  if (!(confirmation.min_effect > campaign.effect_lower_bound && confirmation.min_effect < campaign.effect_upper_bound)) return false;
  return bettingTestRejects(effects, lookAlpha, campaign.effect_lower_bound, campaign.effect_upper_bound, confirmation.min_effect);
}

const outOfBounds = (e: number, c: CampaignFalsePromotionPolicy) => e < c.effect_lower_bound || e > c.effect_upper_bound;

/**
 * The dependence-aware evidence gate: seeds of one fixture form one block,
 * lanes must not share blocks, enough independent confirmation and held-out
 * blocks are needed, and the campaign-adjusted lower bound and the held-out
 * block mean must both clear the minimum effect.
 */
export function evaluateCampaignEvidence(trials: readonly MatchedTrial[], confirmation: ConfirmationPolicy, campaign: CampaignFalsePromotionPolicy): CampaignEvidenceResult {
  const blocks = laneBlocks(trials);
  const result = (authorized: boolean, reason: string, c: number, h: number): CampaignEvidenceResult => ({authorized, reason, independent_confirmation_blocks: c, independent_heldout_blocks: h});
  if (campaign.require_disjoint_lane_blocks && lanesOverlap(blocks)) return result(false, 'dependence blocks overlap across evaluation lanes', 0, 0);
  const conf = blockMeans(blocks.confirmation);
  const held = blockMeans(blocks.heldout);
  const required = Math.max(confirmation.min_confirmation_pairs, campaign.min_independent_confirmation_blocks);
  if (conf.length < required) return result(false, 'insufficient independent confirmation blocks after non-IID clustering', conf.length, held.length);
  if (held.length < confirmation.min_heldout_pairs) return result(false, 'insufficient independent held-out blocks after non-IID clustering', conf.length, held.length);
  if (campaign.robust_method !== 'cluster_t' && trials.some((t) => outOfBounds(trialDelta(t), campaign))) {
    return result(false, 'paired effect falls outside the predeclared robust bounds', conf.length, held.length);
  }
  if (!campaignBoundClears(conf, confirmation, campaign)) return result(false, 'campaign-adjusted block confidence interval does not clear the minimum effect', conf.length, held.length);
  const heldSum = new ExactSum();
  for (const e of held) heldSum.add(e);
  if (heldSum.value() / held.length <= confirmation.min_effect) return result(false, 'independent held-out blocks do not clear the minimum effect', conf.length, held.length);
  return result(true, 'campaign alpha reservation and dependence-aware evidence authorized promotion', conf.length, held.length);
}

/**
 * In campaign mode confirmation keeps spending planned units, even after the
 * ordinary comparison asks for held-out pairs, until the campaign bound clears,
 * the row budget is spent, or (bounded methods) a block mean leaves the bounds.
 */
export function confirmationBlocksReady(trials: readonly MatchedTrial[], confirmation: ConfirmationPolicy, campaign: CampaignFalsePromotionPolicy): boolean {
  const rows = trials.filter((t) => t.lane === 'confirmation');
  if (rows.length >= confirmation.max_confirmation_pairs) return true;
  const effects = blockMeans(laneBlocks(rows).confirmation);
  if (effects.length < Math.max(confirmation.min_confirmation_pairs, campaign.min_independent_confirmation_blocks)) return false;
  if (campaign.robust_method !== 'cluster_t' && effects.some((e) => outOfBounds(e, campaign))) return true;
  return campaignBoundClears(effects, confirmation, campaign) || campaignFutile(rows, confirmation, campaign);
}

/**
 * Futility under the betting method: once enough independent confirmation
 * blocks are in, a betting capital at or below its start means the evidence
 * is not in the candidate's favour, and evaluation may stop without promotion
 * (which can only lower the false-promotion rate). Other methods never stop
 * for futility here.
 */
export function campaignFutile(trials: readonly MatchedTrial[], confirmation: ConfirmationPolicy, campaign: CampaignFalsePromotionPolicy): boolean {
  if (campaign.robust_method !== 'bounded_betting') return false;
  const effects = blockMeans(laneBlocks(trials.filter((t) => t.lane === 'confirmation')).confirmation);
  if (effects.length < Math.max(confirmation.min_confirmation_pairs, campaign.min_independent_confirmation_blocks)) return false;
  if (effects.some((e) => outOfBounds(e, campaign))) return true;
  const lookAlpha = twoSidedTail(confirmation.confidence_z) / maxLooks(confirmation);
  if (lookAlpha === 0 || !(confirmation.min_effect > campaign.effect_lower_bound && confirmation.min_effect < campaign.effect_upper_bound)) return true;
  const test = new BettingTest(lookAlpha, campaign.effect_lower_bound, campaign.effect_upper_bound, confirmation.min_effect);
  for (const e of effects) test.add(e);
  return test.futile();
}

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
  if (comparison.decision !== 'confirmed') fail('INTEGRITY', 'false-promotion authorization requires a confirmed comparison');
  for (const t of trials) {
    if (typeof t.candidate_valid !== 'boolean' || typeof t.incumbent_valid !== 'boolean') fail('INTEGRITY', 'matched evidence has a non-boolean validity flag');
  }
  const keys = pairKeysOf(trials);
  const replayed = evaluateMatchedTrials(candidate, trials, args.confirmation_policy, keys);
  if (stableDigest(replayed) !== stableDigest(comparison)) fail('INTEGRITY', 'false-promotion evidence does not reproduce its confirmed comparison');
  if (new Set(trials.map((t) => t.cohort)).size !== 1) fail('INTEGRITY', 'false-promotion evidence must use exactly one trial cohort');
  if (reservation.candidate_digest !== candidate.digest || reservation.incumbent_digest !== candidate.parent_digest || reservation.evaluator_epoch !== candidate.evaluator_epoch || reservation.campaign_id === '') {
    fail('INTEGRITY', 'candidate lineage does not match its false-promotion reservation');
  }
  if (plan.candidate_digest !== candidate.digest || plan.campaign_id !== reservation.campaign_id) fail('INTEGRITY', 'candidate has no durable campaign fixture reservation');
  if (fixturePlanDigest(plan) !== plan.plan_digest) fail('INTEGRITY', 'campaign fixture reservation plan digest does not match its units');
  const planned = new Map(plan.units.map((u) => [`${u.fixture_digest}\u0000${u.seed}`, u.lane]));
  for (const t of trials) {
    if (t.candidate_digest !== plan.candidate_digest) fail('INTEGRITY', 'matched evidence candidate differs from its fixture reservation');
    if (t.evaluator_epoch !== plan.evaluator_epoch || t.cohort !== plan.cohort) fail('INTEGRITY', 'matched evidence lineage differs from its fixture reservation');
    const lane = planned.get(`${t.fixture_digest}\u0000${t.seed}`);
    if (lane === undefined) fail('INTEGRITY', 'matched evidence contains a fixture outside its reserved plan');
    if (lane !== t.lane) fail('INTEGRITY', 'matched evidence relabels a reserved fixture lane');
  }
  if (confirmationPolicyDigest(args.confirmation_policy) !== reservation.confirmation_policy_digest) fail('INTEGRITY', 'promotion evidence used a policy different from its risk reservation');
  const evidenceDigest = riskEvidenceDigest(trials, keys);
  if (reservation.status !== 'reserved') {
    if (reservation.evidence_digest !== evidenceDigest) fail('INTEGRITY', 'terminal false-promotion reservation cannot be rebound to new evidence');
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
