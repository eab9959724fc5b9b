import {exp} from './special/exp.js';
import {lgamma} from './special/lgamma.js';
import {log} from './special/log.js';
import {log1p} from './special/log1p.js';

const MAX_ITERATIONS = 200;
const EPSILON = 3.0e-14;
const TINY = 1.0e-300;

/** Lentz's continued fraction for the incomplete beta function. */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1.0;
  const qam = a - 1.0;
  let c = 1.0;
  let d = 1.0 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1.0 / d;
  let h = d;
  for (let m = 1; m <= MAX_ITERATIONS; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1.0 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1.0 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1.0 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1.0 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1.0) < EPSILON) return h;
  }
  throw new RangeError('incomplete beta continued fraction did not converge');
}

/**
 * The regularized incomplete beta function I_x(a, b), by the continued
 * fraction on the side where it converges fast.
 */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const logFront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
  const front = exp(logFront);
  if (x < (a + 1.0) / (a + b + 2.0)) return (front * betaContinuedFraction(a, b, x)) / a;
  return 1.0 - (front * betaContinuedFraction(b, a, 1.0 - x)) / b;
}

/** P(T > t) for Student's t with `df` degrees of freedom, t ≥ 0, without 1 − CDF cancellation. */
export function studentTSurvival(t: number, df: number): number {
  const x = df / (df + t * t);
  return 0.5 * regularizedIncompleteBeta(x, df / 2.0, 0.5);
}

const quantileCache = new Map<string, number>();

/**
 * The upper quantile t with P(T > t) = tail, for 0 ≤ tail < 0.5: the bracket
 * [0, 1] is doubled until it holds the root, then bisected 80 times. A tail
 * of 0 gives +∞. Results are cached: the decision asks for few distinct ones.
 */
export function studentTUpperQuantile(tail: number, df: number): number {
  if (!(tail >= 0.0 && tail < 0.5)) throw new RangeError('tail probability must be in [0, 0.5)');
  if (!Number.isSafeInteger(df) || df < 1) throw new RangeError('degrees of freedom must be a positive integer');
  if (tail === 0.0) return Number.POSITIVE_INFINITY;
  const key = `${tail}:${df}`;
  const cached = quantileCache.get(key);
  if (cached !== undefined) return cached;
  let lower = 0.0;
  let upper = 1.0;
  while (studentTSurvival(upper, df) > tail) {
    upper *= 2.0;
    if (!Number.isFinite(upper)) return upper;
  }
  for (let i = 0; i < 80; i++) {
    const mid = (lower + upper) / 2.0;
    if (studentTSurvival(mid, df) > tail) lower = mid;
    else upper = mid;
  }
  const q = (lower + upper) / 2.0;
  if (quantileCache.size > 4096) quantileCache.clear();
  quantileCache.set(key, q);
  return q;
}
