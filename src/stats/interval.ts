import {ExactMoments} from './exact-moments.js';
import {erfc} from './special/erfc.js';
import {studentTUpperQuantile} from './student-t.js';

export interface Interval {
  mean: number;
  low: number | null;
  high: number | null;
}

const SQRT2 = Math.sqrt(2.0);

/** The two-sided normal tail of z: erfc(z/√2). */
export function twoSidedTail(z: number): number {
  return erfc(z / SQRT2);
}

function checkArguments(confidenceZ: number, maxLooks: number): void {
  if (!Number.isFinite(confidenceZ) || confidenceZ <= 0)
    throw new RangeError('confidence_z must be finite and positive');
  if (!Number.isSafeInteger(maxLooks) || maxLooks < 1) throw new RangeError('max_looks must be at least one');
}

/**
 * The Student-t interval from exact moments, spending the two-sided tail of
 * `confidenceZ` equally over `maxLooks` possible looks (Bonferroni).
 */
export function intervalFromMoments(m: ExactMoments, confidenceZ: number, maxLooks: number): Interval {
  checkArguments(confidenceZ, maxLooks);
  const n = m.count;
  const mean = m.mean();
  if (n === 1) return {mean, low: null, high: null};
  const standardError = m.stdev() / Math.sqrt(n);
  if (standardError === 0.0) return {mean, low: mean, high: mean};
  const lookAlpha = twoSidedTail(confidenceZ) / maxLooks;
  const critical = studentTUpperQuantile(lookAlpha / 2.0, n - 1);
  if (!Number.isFinite(critical)) return {mean, low: -Number.MAX_VALUE, high: Number.MAX_VALUE};
  const halfWidth = critical * standardError;
  if (!Number.isFinite(halfWidth)) return {mean, low: -Number.MAX_VALUE, high: Number.MAX_VALUE};
  return {mean, low: mean - halfWidth, high: mean + halfWidth};
}

/**
 * Paired confidence interval for the mean effect, as the reference computes
 * it: exact mean and standard deviation, Student-t critical value at
 * erfc(z/√2)/maxLooks/2 with n − 1 degrees of freedom. One effect gives no
 * bounds (null); zero spread gives the mean as both; a non-finite critical
 * value gives ±Number.MAX_VALUE.
 */
export function pairedConfidenceInterval(effects: readonly number[], confidenceZ: number, maxLooks = 1): Interval {
  if (effects.length === 0) throw new RangeError('pairedConfidenceInterval requires at least one effect');
  checkArguments(confidenceZ, maxLooks);
  const m = new ExactMoments();
  for (const e of effects) m.add(e);
  return intervalFromMoments(m, confidenceZ, maxLooks);
}
