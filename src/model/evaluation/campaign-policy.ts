/** A campaign's false-promotion policy: alpha spent over every candidate, and the confirmation policy it adjusts. */
import {fail} from '../../errors.js';
import {powInt} from '../../stats/pow-int.js';
import {requiredConfidenceZ} from '../../stats/required-z.js';
import type {ConfirmationPolicy} from './policy.js';

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
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('SCHEMA_VIOLATION', 'campaign policy must be an object');
  const p = value as Record<string, unknown>;
  const extra = Object.keys(p).filter((k) => !POLICY_KEYS.includes(k));
  if (extra.length) fail('SCHEMA_VIOLATION', `campaign policy has unknown keys: ${extra.join(', ')}`);
  const unit = (k: string) => {
    const v = p[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || !(v > 0 && v < 1))
      fail('SCHEMA_VIOLATION', `campaign policy ${k} must be finite and between zero and one`);
    return v;
  };
  const blocks = p.min_independent_confirmation_blocks;
  if (typeof blocks !== 'number' || !Number.isSafeInteger(blocks) || blocks < 2)
    fail('SCHEMA_VIOLATION', 'min_independent_confirmation_blocks must be an integer of at least two');
  if (typeof p.require_disjoint_lane_blocks !== 'boolean')
    fail('SCHEMA_VIOLATION', 'require_disjoint_lane_blocks must be a boolean');
  if (!(ROBUST_METHODS as readonly unknown[]).includes(p.robust_method))
    fail('SCHEMA_VIOLATION', `robust_method must be one of ${ROBUST_METHODS.join(', ')}`);
  const lo = p.effect_lower_bound;
  const hi = p.effect_upper_bound;
  if (typeof lo !== 'number' || typeof hi !== 'number' || !Number.isFinite(lo) || !Number.isFinite(hi) || lo >= hi)
    fail('SCHEMA_VIOLATION', 'effect bounds must be finite and increasing');
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
  if (!Number.isSafeInteger(candidateIndex) || candidateIndex < 0)
    fail('INVALID_INPUT', 'candidate_index must be a non-negative integer');
  const allocated =
    policy.familywise_alpha * (1.0 - policy.allocation_decay) * powInt(policy.allocation_decay, candidateIndex);
  if (allocated === 0.0)
    fail('INVALID_INPUT', 'campaign alpha allocation underflowed; no further promotion can be authorized');
  return allocated;
}

export {requiredConfidenceZ};

/** The base policy with confidence_z raised to the campaign's required z. */
export function campaignAdjustedConfirmationPolicy(base: ConfirmationPolicy, requiredZ: number): ConfirmationPolicy {
  return {...base, confidence_z: Math.max(base.confidence_z, requiredZ)};
}
