import {twoSidedTail} from './interval.js';

const SCALE = 1_000_000_000_000;

/**
 * The smallest z with erfc(z/√2) ≤ alpha (bracket doubling, then 160
 * bisections), rounded up to 12 decimals so that storing it can never make the
 * realized tail larger than the allocation.
 */
export function requiredConfidenceZ(alpha: number): number {
  if (!Number.isFinite(alpha) || !(alpha > 0.0 && alpha < 1.0))
    throw new RangeError('allocated alpha must be finite and between zero and one');
  let lower = 0.0;
  let upper = 1.0;
  while (twoSidedTail(upper) > alpha) {
    lower = upper;
    upper *= 2.0;
    if (!Number.isFinite(upper)) throw new RangeError('campaign alpha allocation is too small to invert');
  }
  for (let i = 0; i < 160; i++) {
    const mid = (lower + upper) / 2.0;
    if (twoSidedTail(mid) > alpha) lower = mid;
    else upper = mid;
  }
  return Math.ceil(upper * SCALE) / SCALE;
}
