const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

function bitLength(n: bigint): number {
  return n === 0n ? 0 : n.toString(2).length;
}

/** m · 2^e for a positive BigInt m, correctly rounded to a double (ties to even, subnormals included). */
export function bigTimesPow2(m: bigint, e: number): number {
  if (m === 0n) return 0;
  const bits = bitLength(m);
  // The result's binary exponent is bits - 1 + e; keep 53 bits (fewer when subnormal).
  const topExponent = bits - 1 + e;
  if (topExponent > 1023) return Number.POSITIVE_INFINITY;
  const keep = topExponent >= -1022 ? 53 : 53 - (-1022 - topExponent);
  if (keep <= 0) {
    // Below half the smallest subnormal, or exactly half (ties to even: 0).
    if (keep < 0) return 0;
    const half = 1n << BigInt(bits - 1);
    return m > half ? 2 ** -1074 : 0;
  }
  let mant = m;
  let exp = e;
  if (bits > keep) {
    const drop = BigInt(bits - keep);
    const rem = mant & ((1n << drop) - 1n);
    mant >>= drop;
    exp += Number(drop);
    const half = 1n << (drop - 1n);
    if (rem > half || (rem === half && (mant & 1n) === 1n)) mant += 1n;
  }
  // mant < 2^54 now: exact in a double; scaling by 2^exp is exact unless it overflows.
  let v = Number(mant);
  while (exp > 1000) {
    v *= 2 ** 1000;
    exp -= 1000;
  }
  while (exp < -1000) {
    v *= 2 ** -1000;
    exp += 1000;
  }
  return v * 2 ** exp;
}

/**
 * base^n for a positive finite base and a non-negative integer n, correctly
 * rounded (computed exactly with BigInt), so that it is the same on every
 * engine; glibc's pow, which Python uses, agrees except in rare hard cases.
 */
export function powInt(base: number, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError('powInt needs a non-negative integer exponent');
  if (!(base > 0) || !Number.isFinite(base)) throw new RangeError('powInt needs a positive finite base');
  if (n === 0) return 1;
  f64[0] = base;
  const bitsOf = u64[0]!;
  const biased = Number((bitsOf >> 52n) & 0x7ffn);
  let mant = bitsOf & 0xfffffffffffffn;
  let e: number;
  if (biased === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = biased - 1075;
  }
  while ((mant & 1n) === 0n) {
    mant >>= 1n;
    e++;
  }
  return bigTimesPow2(mant ** BigInt(n), e * n);
}
