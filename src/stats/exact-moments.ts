import {ExactSum} from './exact-sum.js';

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

/** A finite double as mantissa · 2^exponent with an odd (or zero) integer mantissa. */
export function decompose(x: number): [bigint, number] {
  if (x === 0) return [0n, 0];
  f64[0] = x;
  const bits = u64[0]!;
  const negative = bits >> 63n === 1n;
  const biased = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & 0xfffffffffffffn;
  let exponent: number;
  if (biased === 0) exponent = -1074;
  else {
    mantissa |= 0x10000000000000n;
    exponent = biased - 1075;
  }
  while ((mantissa & 1n) === 0n) {
    mantissa >>= 1n;
    exponent++;
  }
  return [negative ? -mantissa : mantissa, exponent];
}

export function bitLength(n: bigint): number {
  return n === 0n ? 0 : n.toString(2).length;
}

function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = 1n << BigInt((bitLength(n) >> 1) + 1);
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/**
 * The square root of num/den (both positive), correctly rounded to a double:
 * an integer square root with at least 2 guard bits, made round-to-odd with a
 * sticky bit, then one rounding to nearest.
 */
export function sqrtOfRatio(num: bigint, den: bigint): number {
  if (num === 0n) return 0;
  // Scale so that the integer root has about 64 significant bits.
  const shift = Math.ceil((128 - (bitLength(num) - bitLength(den))) / 2);
  const scaledNum = shift >= 0 ? num << BigInt(2 * shift) : num;
  const scaledDen = shift >= 0 ? den : den << BigInt(-2 * shift);
  const q = scaledNum / scaledDen;
  let a = isqrt(q);
  if (a * a * scaledDen !== scaledNum) a |= 1n;
  // a / 2^shift, rounded once: a has ≥ 64 bits, so converting rounds correctly.
  return scaleByPowerOfTwo(Number(a), -shift);
}

/** x · 2^k with at most one rounding (only when the result is subnormal). */
export function scaleByPowerOfTwo(x: number, k: number): number {
  let v = x;
  let rest = k;
  while (rest > 1000) {
    v *= 2 ** 1000;
    rest -= 1000;
  }
  while (rest < -1000) {
    v *= 2 ** -1000;
    rest += 1000;
  }
  return v * 2 ** rest;
}

/**
 * Running exact first and second moments of doubles. The sample standard
 * deviation is the correctly rounded square root of the exact
 * Σ(x − mean)²/(n − 1), as Python 3.11's statistics.stdev computes it; the
 * mean is the correctly rounded sum divided by n (statistics.fmean).
 */
export class ExactMoments {
  private sum = 0n; // Σ m_i · 2^(e_i - scale)
  private sumSq = 0n; // Σ (m_i · 2^(e_i - scale))²
  private scale = 0; // common exponent: every value is an integer multiple of 2^scale
  private n = 0;
  private readonly exact = new ExactSum();

  get count(): number {
    return this.n;
  }

  add(x: number): void {
    if (!Number.isFinite(x)) throw new RangeError('paired effects must be finite');
    this.exact.add(x);
    const [m, e] = decompose(x);
    if (this.n === 0) this.scale = e;
    if (m !== 0n && e < this.scale) {
      const d = BigInt(this.scale - e);
      this.sum <<= d;
      this.sumSq <<= 2n * d;
      this.scale = e;
    }
    const v = m === 0n ? 0n : m << BigInt(e - this.scale);
    this.sum += v;
    this.sumSq += v * v;
    this.n++;
  }

  mean(): number {
    if (this.n === 0) throw new RangeError('mean requires at least one value');
    return this.exact.value() / this.n;
  }

  /** Sample standard deviation (n − 1 denominator); needs two values. */
  stdev(): number {
    if (this.n < 2) throw new RangeError('stdev requires at least two values');
    const n = BigInt(this.n);
    // Σ(x − x̄)² = (nΣx² − (Σx)²)/n in units of 2^(2·scale); divided by n − 1.
    const ss = n * this.sumSq - this.sum * this.sum;
    if (ss === 0n) return 0;
    let num = ss;
    let den = n * (n - 1n);
    if (this.scale >= 0) num <<= BigInt(2 * this.scale);
    else den <<= BigInt(-2 * this.scale);
    return sqrtOfRatio(num, den);
  }
}

/** statistics.stdev of a list. */
export function sampleStdev(values: readonly number[]): number {
  const m = new ExactMoments();
  for (const v of values) m.add(v);
  return m.stdev();
}
