import {fromWords, highWord, lowWord} from './bits.js';
import {EXP_INVLN2N, EXP_NEGLN2HIN, EXP_NEGLN2LON, EXP_POLY, EXP_SHIFT, EXP_TAB_HI, EXP_TAB_LO} from './glibc-data.js';

const [C2, C3, C4, C5] = EXP_POLY;
const TWO_1009 = fromWords((1009 + 1023) << 20, 0);
const TWO_M1022 = fromWords(1 << 20, 0);

/**
 * Results that may overflow or underflow: scale·(1 + tmp) evaluated without an
 * intermediate overflow, and with care in the subnormal range.
 */
function specialCase(tmp: number, sbitsHi: number, sbitsLo: number, kiLo: number): number {
  if ((kiLo & 0x80000000) === 0) {
    // k > 0: the exponent of scale may have overflowed by up to 460.
    const scale = fromWords((sbitsHi - (1009 << 20)) >>> 0, sbitsLo);
    return TWO_1009 * (scale + scale * tmp);
  }
  // k < 0: take care in the subnormal range.
  const scale = fromWords((sbitsHi + (1022 << 20)) >>> 0, sbitsLo);
  let y = scale + scale * tmp;
  if (y < 1.0) {
    // Round y to its final precision before scaling it down, avoiding double rounding.
    let lo = scale - y + scale * tmp;
    const hi = 1.0 + y;
    lo = 1.0 - hi + y + lo;
    y = hi + lo - 1.0;
    if (y === 0) y = 0;
  }
  return TWO_M1022 * y;
}

/**
 * e^x, following glibc 2.36's table-driven algorithm (x = k·ln2/128 + r,
 * e^x = 2^(k/128)·e^r with a degree-5 polynomial), in the same order of
 * operations as its non-FMA build, so results equal glibc's bit for bit.
 */
export function exp(x: number): number {
  let abstop = (highWord(x) >>> 20) & 0x7ff;
  // Outside [2^-54, 512): tiny, large, or special.
  if ((abstop - 0x3c9) >>> 0 >= 0x408 - 0x3c9) {
    if (abstop < 0x3c9) return 1.0 + x;
    if (abstop >= 0x409) {
      if (x === Number.NEGATIVE_INFINITY) return 0.0;
      if (abstop >= 0x7ff) return 1.0 + x;
      return x < 0 ? 0.0 : Number.POSITIVE_INFINITY;
    }
    abstop = 0; // large |x|: handled by specialCase below
  }
  const z = EXP_INVLN2N * x;
  let kd = z + EXP_SHIFT;
  const kiLo = lowWord(kd);
  kd -= EXP_SHIFT;
  const r = x + kd * EXP_NEGLN2HIN + kd * EXP_NEGLN2LON;
  const idx = 2 * (kiLo & 127);
  const tail = fromWords(EXP_TAB_HI[idx]!, EXP_TAB_LO[idx]!);
  const sbitsHi = (EXP_TAB_HI[idx + 1]! + (kiLo << 13)) >>> 0;
  const sbitsLo = EXP_TAB_LO[idx + 1]!;
  const r2 = r * r;
  const tmp = tail + r + r2 * (C2 + r * C3) + r2 * r2 * (C4 + r * C5);
  if (abstop === 0) return specialCase(tmp, sbitsHi, sbitsLo, kiLo);
  const scale = fromWords(sbitsHi, sbitsLo);
  return scale + scale * tmp;
}
