/** Access to the two 32-bit words of a double, as C code does with GET_HIGH_WORD and friends. */
const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HI = LITTLE ? 1 : 0;
const LO = LITTLE ? 0 : 1;

/** High word (sign, exponent, top 20 mantissa bits), unsigned. */
export function highWord(x: number): number {
  f64[0] = x;
  return u32[HI]!;
}

/** Low word (bottom 32 mantissa bits), unsigned. */
export function lowWord(x: number): number {
  f64[0] = x;
  return u32[LO]!;
}

/** The double with these high and low words. */
export function fromWords(hi: number, lo: number): number {
  u32[HI] = hi >>> 0;
  u32[LO] = lo >>> 0;
  return f64[0]!;
}

/** x with its high word replaced. */
export function withHighWord(x: number, hi: number): number {
  f64[0] = x;
  u32[HI] = hi >>> 0;
  return f64[0]!;
}

/** x with its low word replaced. */
export function withLowWord(x: number, lo: number): number {
  f64[0] = x;
  u32[LO] = lo >>> 0;
  return f64[0]!;
}
