import {performance} from 'node:perf_hooks';
import {
  campaignAlphaForCandidate,
  DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY,
  type CampaignFalsePromotionPolicy,
  type RobustMethod,
} from '../../model/evaluation/campaign.js';
import {BettingTest} from '../../stats/betting.js';
import {ExactMoments} from '../../stats/exact-moments.js';
import {ExactSum} from '../../stats/exact-sum.js';
import {intervalFromMoments, twoSidedTail} from '../../stats/interval.js';
import {requiredConfidenceZ} from '../../stats/required-z.js';
import {Random} from '../../stats/rng.js';
import {log} from '../../stats/special/log.js';

type Distribution = 'normal' | 'heteroskedastic' | 'clustered' | 'bounded_heavy_tail' | 'clustered_seeds';
type Method = RobustMethod | 'naive_pairs';

export interface CalibrationCase {
  case: string;
  method: Method;
  effect: number;
  distribution: Distribution;
  /** Independent confirmation blocks (fixtures) per candidate. */
  blocks: number;
  heldoutBlocks: number;
  /** Seeds per fixture (clustered_seeds only). */
  seedsPerFixture?: number;
  reference: boolean;
}

/** The seven rows of the reference's calibration table, plus autoctx's own. */
export const CALIBRATION_CASES: readonly CalibrationCase[] = [
  {
    case: 'null normal',
    method: 'cluster_t',
    effect: 0,
    distribution: 'normal',
    blocks: 12,
    heldoutBlocks: 8,
    reference: true,
  },
  {
    case: 'null clustered fixtures',
    method: 'cluster_t',
    effect: 0,
    distribution: 'clustered',
    blocks: 12,
    heldoutBlocks: 8,
    reference: true,
  },
  {
    case: 'clear win',
    method: 'cluster_t',
    effect: 0.4,
    distribution: 'normal',
    blocks: 12,
    heldoutBlocks: 8,
    reference: true,
  },
  {
    case: 'near tie',
    method: 'cluster_t',
    effect: 0.03,
    distribution: 'normal',
    blocks: 12,
    heldoutBlocks: 8,
    reference: true,
  },
  {
    case: 'heteroskedastic win',
    method: 'cluster_t',
    effect: 0.3,
    distribution: 'heteroskedastic',
    blocks: 24,
    heldoutBlocks: 8,
    reference: true,
  },
  {
    case: 'null bounded heavy tail',
    method: 'bounded_hoeffding',
    effect: 0,
    distribution: 'bounded_heavy_tail',
    blocks: 128,
    heldoutBlocks: 8,
    reference: true,
  },
  {
    case: 'bounded heavy-tail win',
    method: 'bounded_hoeffding',
    effect: 0.4,
    distribution: 'bounded_heavy_tail',
    blocks: 128,
    heldoutBlocks: 8,
    reference: true,
  },
  {
    case: 'null bounded heavy tail',
    method: 'bounded_betting',
    effect: 0,
    distribution: 'bounded_heavy_tail',
    blocks: 128,
    heldoutBlocks: 8,
    reference: false,
  },
  {
    case: 'bounded heavy-tail win',
    method: 'bounded_betting',
    effect: 0.4,
    distribution: 'bounded_heavy_tail',
    blocks: 128,
    heldoutBlocks: 8,
    reference: false,
  },
  {
    case: 'null clustered seeds (rho 0.5, 4 seeds per fixture)',
    method: 'cluster_t',
    effect: 0,
    distribution: 'clustered_seeds',
    blocks: 12,
    heldoutBlocks: 8,
    seedsPerFixture: 4,
    reference: false,
  },
  {
    case: 'null clustered seeds (rho 0.5, 4 seeds per fixture), naive per-pair',
    method: 'naive_pairs',
    effect: 0,
    distribution: 'clustered_seeds',
    blocks: 12,
    heldoutBlocks: 8,
    seedsPerFixture: 4,
    reference: false,
  },
];

export interface CalibrationRow {
  case: string;
  method: Method;
  promotion_rate: number;
  avg_candidates: number;
  avg_confirmation_blocks: number;
  seconds: number;
}

export interface CalibrationOptions {
  campaigns?: number;
  seed?: number;
  maxCandidates?: number;
  cases?: readonly CalibrationCase[];
}

const SIGMA_CLUSTERED_SEEDS = 0.25;
const RHO = 0.5;

/** One fixture-level effect (a block), as the reference draws them. */
function sampleBlock(rng: Random, c: CalibrationCase, index: number): number {
  switch (c.distribution) {
    case 'normal':
      return rng.gauss(c.effect, 0.2);
    case 'heteroskedastic':
      return rng.gauss(c.effect, index % 2 === 0 ? 0.08 : 0.35);
    case 'clustered':
      return rng.gauss(c.effect, 0.25);
    case 'bounded_heavy_tail':
      if (rng.random() < 0.12) return rng.random() < (1.0 + c.effect) / 2.0 ? 1.0 : -1.0;
      return Math.max(-1.0, Math.min(1.0, rng.gauss(c.effect, 0.08)));
    case 'clustered_seeds':
      throw new Error('clustered_seeds draws seeds, not blocks');
  }
}

/**
 * Seeds of one fixture share a fixture effect: each seed's effect is
 * effect + F + e with F ~ N(0, ρσ²) shared and e ~ N(0, (1 − ρ)σ²) its own.
 */
function sampleSeeds(rng: Random, c: CalibrationCase): number[] {
  const shared = rng.gauss(0, SIGMA_CLUSTERED_SEEDS * Math.sqrt(RHO));
  const own = SIGMA_CLUSTERED_SEEDS * Math.sqrt(1 - RHO);
  return Array.from({length: c.seedsPerFixture ?? 1}, () => c.effect + shared + rng.gauss(0, own));
}

interface Policy {
  min: number;
  max: number;
  heldout: number;
  z: number;
}

/**
 * The sequential confirmation of one candidate, with the reference's rules:
 * from the minimum to the maximum number of blocks, stop failing when the
 * ordinary interval lies below the minimum effect, and succeed when it lies
 * above and the campaign method clears too. Statistics are kept incrementally
 * (exact moments, exact sums, the betting capital): one update per look.
 */
function sequentialConfirmation(
  values: readonly number[],
  p: Policy,
  method: Method,
  campaign: CampaignFalsePromotionPolicy,
): [used: number, clears: boolean] {
  const looks = p.max - p.min + 1;
  const moments = new ExactMoments();
  const sum = new ExactSum();
  const lookAlpha = twoSidedTail(p.z) / looks;
  const betting =
    method === 'bounded_betting' && lookAlpha > 0
      ? new BettingTest(lookAlpha, campaign.effect_lower_bound, campaign.effect_upper_bound, 0)
      : null;
  const hoeffdingScale = lookAlpha > 0 ? (campaign.effect_upper_bound - campaign.effect_lower_bound) * 1 : 0;
  const hoeffdingLog = lookAlpha > 0 ? log(1.0 / lookAlpha) : Number.POSITIVE_INFINITY;
  let outOfBounds = false;
  const maximum = Math.min(values.length, p.max);
  for (let i = 0; i < maximum; i++) {
    const v = values[i]!;
    moments.add(v);
    sum.add(v);
    betting?.add(v);
    if (v < campaign.effect_lower_bound || v > campaign.effect_upper_bound) outOfBounds = true;
    const count = i + 1;
    if (count < p.min) continue;
    if (betting && betting.futile()) return [count, false];
    const {low, high} = intervalFromMoments(moments, p.z, looks);
    if (high !== null && high <= 0) return [count, false];
    if (low === null || low <= 0) continue;
    let clears: boolean;
    if (method === 'cluster_t' || method === 'naive_pairs') clears = true;
    else if (outOfBounds || lookAlpha === 0) clears = false;
    else if (method === 'bounded_hoeffding')
      clears = sum.value() / count - hoeffdingScale * Math.sqrt(hoeffdingLog / (2.0 * count)) > 0;
    else clears = betting!.rejects();
    if (clears) return [count, true];
  }
  return [maximum, false];
}

/** Simulate campaigns for one case: promotion rate, candidates and confirmation blocks per campaign. */
export function simulateCase(c: CalibrationCase, options: CalibrationOptions = {}): CalibrationRow {
  const started = performance.now();
  const campaigns = options.campaigns ?? 1000;
  const maxCandidates = options.maxCandidates ?? 8;
  const rng = new Random(options.seed ?? 986);
  const campaign: CampaignFalsePromotionPolicy = {
    ...DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY,
    robust_method: c.method === 'naive_pairs' ? 'cluster_t' : c.method,
  };
  const units =
    c.distribution === 'clustered_seeds' && c.method === 'naive_pairs' ? c.blocks * (c.seedsPerFixture ?? 1) : c.blocks;
  const base: Omit<Policy, 'z'> = {min: Math.min(6, units), max: units, heldout: Math.min(2, c.heldoutBlocks)};
  const zByIndex = Array.from({length: maxCandidates}, (_, i) =>
    Math.max(1.96, requiredConfidenceZ(campaignAlphaForCandidate(campaign, i))),
  );
  let promotions = 0;
  let candidates = 0;
  let blocksUsed = 0;
  for (let k = 0; k < campaigns; k++) {
    for (let i = 0; i < maxCandidates; i++) {
      candidates++;
      let confirmation: number[];
      let heldout: number[];
      if (c.distribution === 'clustered_seeds') {
        const fixtures = Array.from({length: c.blocks}, () => sampleSeeds(rng, c));
        const held = Array.from({length: c.heldoutBlocks}, () => sampleSeeds(rng, c));
        // Blocked: one value per fixture (the mean of its seeds); naive: every seed a pair.
        confirmation =
          c.method === 'naive_pairs' ? fixtures.flat() : fixtures.map((s) => s.reduce((a, b) => a + b, 0) / s.length);
        heldout = c.method === 'naive_pairs' ? held.flat() : held.map((s) => s.reduce((a, b) => a + b, 0) / s.length);
      } else {
        confirmation = Array.from({length: c.blocks}, (_, j) => sampleBlock(rng, c, j));
        heldout = Array.from({length: c.heldoutBlocks}, (_, j) => sampleBlock(rng, c, j + c.blocks));
      }
      const [used, clears] = sequentialConfirmation(confirmation, {...base, z: zByIndex[i]!}, c.method, campaign);
      blocksUsed += used;
      const h = new ExactSum();
      for (const v of heldout.slice(0, base.heldout)) h.add(v);
      if (clears && h.value() / base.heldout > 0) {
        promotions++;
        break;
      }
    }
  }
  return {
    case: c.case,
    method: c.method,
    promotion_rate: promotions / campaigns,
    avg_candidates: candidates / campaigns,
    avg_confirmation_blocks: blocksUsed / campaigns,
    seconds: Math.round((performance.now() - started) / 10) / 100,
  };
}

export interface CalibrationResult {
  status: 'ok';
  campaigns: number;
  seed: number;
  rows: CalibrationRow[];
}

/** The calibration table: every case, in order. */
export function calibrate(options: CalibrationOptions = {}): CalibrationResult {
  const campaigns = options.campaigns ?? 1000;
  const seed = options.seed ?? 986;
  if (!Number.isSafeInteger(campaigns) || campaigns < 1) throw new RangeError('campaigns must be a positive integer');
  const rows = (options.cases ?? CALIBRATION_CASES).map((c) => simulateCase(c, {...options, campaigns, seed}));
  return {status: 'ok', campaigns, seed, rows};
}
