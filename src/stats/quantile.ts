import {bitLength, decompose, scaleByPowerOfTwo} from './exact-moments.js';

/**
 * Exact summary statistics for the promotion guardrails: each is computed as an exact rational number with BigInt,
 * compared exactly, and rounded once to the nearest double (ties to even) only to be shown or recorded. The same on
 * every machine and Node version; no Math function is called.
 */

/** An exact rational number num/den, den > 0. */
export interface Ratio {
  num: bigint;
  den: bigint;
}

/** A finite double as an exact ratio (the denominator a power of two). */
export function ratioOf(x: number): Ratio {
  if (!Number.isFinite(x)) throw new RangeError('an exact ratio needs a finite number');
  const [m, e] = decompose(x);
  return e >= 0 ? {num: m << BigInt(e), den: 1n} : {num: m, den: 1n << BigInt(-e)};
}

function larger(a: bigint, b: bigint): bigint {
  if (a < b) return b;
  return a;
}

/** The sign of a − b: −1, 0 or 1, exactly. */
export function compareRatio(a: Ratio, b: Ratio): number {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/** (x·mul + add)/div, exactly (div > 0). */
export function affineRatio(x: Ratio, mul: bigint, add: bigint, div: bigint): Ratio {
  return {num: x.num * mul + add * x.den, den: x.den * div};
}

/** num/den (den > 0), correctly rounded to the nearest double, ties to even, subnormal results included. */
export function roundRatio({num, den}: Ratio): number {
  if (den <= 0n) throw new RangeError('roundRatio needs a positive denominator');
  if (num === 0n) return 0;
  const negative = num < 0n;
  const a = negative ? -num : num;
  // e = floor(log2(a / den))
  let e = bitLength(a) - bitLength(den);
  if (e >= 0 ? a < den << BigInt(e) : a << BigInt(-e) < den) e--;
  // The result's unit in the last place is 2^u (never below the smallest subnormal).
  const u = Math.max(e - 52, -1074);
  // q: the value in units of 2^(u-2), truncated (two guard bits), and whether anything was cut off.
  const shift = 2 - u;
  const n = shift >= 0 ? a << BigInt(shift) : a;
  const d = shift >= 0 ? den : den << BigInt(-shift);
  const q = n / d;
  const sticky = q * d !== n;
  const guard = q & 3n;
  let m = q >> 2n;
  if (guard > 2n || (guard === 2n && (sticky || (m & 1n) === 1n))) m += 1n;
  // m ≤ 2^53, so Number(m) is exact, and m · 2^u is a double (or beyond the largest one: Infinity).
  const v = scaleByPowerOfTwo(Number(m), u);
  return negative ? -v : v;
}

/**
 * The quantile of finite values sorted ascending at p = pNum/pDen in [0, 1], by Hyndman and Fan's definition 7
 * (R's and NumPy's default, Python's `statistics.quantiles(method="inclusive")`): with h = (n − 1)·p, the value
 * x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]) (0-based), exactly. At p = 1/2 it is the median (the mean of the two
 * middle values when n is even).
 */
export function quantileSorted(sorted: readonly number[], pNum: number, pDen: number): Ratio {
  const n = sorted.length;
  if (n === 0) throw new RangeError('a quantile needs at least one value');
  if (!Number.isSafeInteger(pNum) || !Number.isSafeInteger(pDen) || pDen <= 0 || pNum < 0 || pNum > pDen)
    throw new RangeError('a quantile needs p = pNum/pDen in [0, 1]');
  const h = BigInt(n - 1) * BigInt(pNum);
  const den = BigInt(pDen);
  const lo = Number(h / den);
  const r = h % den;
  const x0 = ratioOf(sorted[lo]!);
  if (r === 0n) return x0;
  const x1 = ratioOf(sorted[lo + 1]!);
  // (x0·(den − r) + x1·r)/den over the common denominator of x0 and x1 (both powers of two)
  const common = larger(x0.den, x1.den);
  const num = x0.num * (common / x0.den) * (den - r) + x1.num * (common / x1.den) * r;
  return {num, den: common * den};
}

/** The exact mean of finite values. */
export function exactMean(values: readonly number[]): Ratio {
  if (values.length === 0) throw new RangeError('a mean needs at least one value');
  const parts = values.map(ratioOf);
  const common = parts.reduce((c, p) => larger(c, p.den), 1n);
  const sum = parts.reduce((s, p) => s + p.num * (common / p.den), 0n);
  return {num: sum, den: common * BigInt(values.length)};
}

/** The statistics a guardrail may name. */
export type SummaryStatistic = 'median' | 'mean' | 'p90' | 'p95' | 'max';

/**
 * One statistic of finite values, exactly: median, p90 and p95 are quantiles (definition 7, above) at 1/2, 9/10 and
 * 19/20; mean is the sum divided by n; max is the largest value.
 */
export function summaryStatistic(stat: SummaryStatistic, values: readonly number[]): Ratio {
  if (values.length === 0) throw new RangeError(`${stat} needs at least one value`);
  for (const v of values) if (!Number.isFinite(v)) throw new RangeError(`${stat} needs finite values`);
  if (stat === 'mean') return exactMean(values);
  const sorted = [...values].sort((a, b) => a - b);
  if (stat === 'max') return ratioOf(sorted[sorted.length - 1]!);
  const [pNum, pDen] = stat === 'median' ? [1, 2] : stat === 'p90' ? [9, 10] : [19, 20];
  return quantileSorted(sorted, pNum, pDen);
}
