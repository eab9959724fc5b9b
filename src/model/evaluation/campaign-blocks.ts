/** The campaign's statistics over fixture blocks: the bound a candidate must clear, readiness and futility. */
import {compareUtf16} from '../../canonical/index.js';
import {ExactSum} from '../../stats/exact-sum.js';
import {ExactMoments} from '../../stats/exact-moments.js';
import {intervalFromMoments, twoSidedTail} from '../../stats/interval.js';
import {log} from '../../stats/special/log.js';
import {BettingTest, bettingTestRejects} from '../../stats/betting.js';
import type {ConfirmationPolicy} from './policy.js';
import {trialDelta, type MatchedTrial, type TrialLane} from './trial.js';
import type {CampaignFalsePromotionPolicy} from './campaign-policy.js';

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
export function campaignBoundClears(
  effects: readonly number[],
  confirmation: ConfirmationPolicy,
  campaign: CampaignFalsePromotionPolicy,
): boolean {
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
  if (!(confirmation.min_effect > campaign.effect_lower_bound && confirmation.min_effect < campaign.effect_upper_bound))
    return false;
  return bettingTestRejects(
    effects,
    lookAlpha,
    campaign.effect_lower_bound,
    campaign.effect_upper_bound,
    confirmation.min_effect,
  );
}

const outOfBounds = (e: number, c: CampaignFalsePromotionPolicy) =>
  e < c.effect_lower_bound || e > c.effect_upper_bound;

/**
 * The dependence-aware evidence gate: seeds of one fixture form one block,
 * lanes must not share blocks, enough independent confirmation and held-out
 * blocks are needed, and the campaign-adjusted lower bound and the held-out
 * block mean must both clear the minimum effect.
 */
export function evaluateCampaignEvidence(
  trials: readonly MatchedTrial[],
  confirmation: ConfirmationPolicy,
  campaign: CampaignFalsePromotionPolicy,
): CampaignEvidenceResult {
  const blocks = laneBlocks(trials);
  const result = (authorized: boolean, reason: string, c: number, h: number): CampaignEvidenceResult => ({
    authorized,
    reason,
    independent_confirmation_blocks: c,
    independent_heldout_blocks: h,
  });
  if (campaign.require_disjoint_lane_blocks && lanesOverlap(blocks))
    return result(false, 'dependence blocks overlap across evaluation lanes', 0, 0);
  const conf = blockMeans(blocks.confirmation);
  const held = blockMeans(blocks.heldout);
  const required = Math.max(confirmation.min_confirmation_pairs, campaign.min_independent_confirmation_blocks);
  if (conf.length < required)
    return result(
      false,
      'insufficient independent confirmation blocks after non-IID clustering',
      conf.length,
      held.length,
    );
  if (held.length < confirmation.min_heldout_pairs)
    return result(false, 'insufficient independent held-out blocks after non-IID clustering', conf.length, held.length);
  if (campaign.robust_method !== 'cluster_t' && trials.some((t) => outOfBounds(trialDelta(t), campaign))) {
    return result(false, 'paired effect falls outside the predeclared robust bounds', conf.length, held.length);
  }
  if (!campaignBoundClears(conf, confirmation, campaign))
    return result(
      false,
      'campaign-adjusted block confidence interval does not clear the minimum effect',
      conf.length,
      held.length,
    );
  const heldSum = new ExactSum();
  for (const e of held) heldSum.add(e);
  if (heldSum.value() / held.length <= confirmation.min_effect)
    return result(false, 'independent held-out blocks do not clear the minimum effect', conf.length, held.length);
  return result(
    true,
    'campaign alpha reservation and dependence-aware evidence authorized promotion',
    conf.length,
    held.length,
  );
}

/**
 * In campaign mode confirmation keeps spending planned units, even after the
 * ordinary comparison asks for held-out pairs, until the campaign bound clears,
 * the row budget is spent, or (bounded methods) a block mean leaves the bounds.
 */
export function confirmationBlocksReady(
  trials: readonly MatchedTrial[],
  confirmation: ConfirmationPolicy,
  campaign: CampaignFalsePromotionPolicy,
): boolean {
  const rows = trials.filter((t) => t.lane === 'confirmation');
  if (rows.length >= confirmation.max_confirmation_pairs) return true;
  const effects = blockMeans(laneBlocks(rows).confirmation);
  if (effects.length < Math.max(confirmation.min_confirmation_pairs, campaign.min_independent_confirmation_blocks))
    return false;
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
export function campaignFutile(
  trials: readonly MatchedTrial[],
  confirmation: ConfirmationPolicy,
  campaign: CampaignFalsePromotionPolicy,
): boolean {
  if (campaign.robust_method !== 'bounded_betting') return false;
  const effects = blockMeans(laneBlocks(trials.filter((t) => t.lane === 'confirmation')).confirmation);
  if (effects.length < Math.max(confirmation.min_confirmation_pairs, campaign.min_independent_confirmation_blocks))
    return false;
  if (effects.some((e) => outOfBounds(e, campaign))) return true;
  const lookAlpha = twoSidedTail(confirmation.confidence_z) / maxLooks(confirmation);
  if (
    lookAlpha === 0 ||
    !(confirmation.min_effect > campaign.effect_lower_bound && confirmation.min_effect < campaign.effect_upper_bound)
  )
    return true;
  const test = new BettingTest(
    lookAlpha,
    campaign.effect_lower_bound,
    campaign.effect_upper_bound,
    confirmation.min_effect,
  );
  for (const e of effects) test.add(e);
  return test.futile();
}
