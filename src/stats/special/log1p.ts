import {highWord, withHighWord} from './bits.js';
import {LOG1P_LN2_HI, LOG1P_LN2_LO, LOG1P_LP} from './glibc-data.js';

const [, LP1, LP2, LP3, LP4, LP5, LP6, LP7] = LOG1P_LP;
const TWO54 = 18014398509481984;

/**
 * log(1 + x), following glibc 2.36's s_log1p.c (the Sun algorithm: reduce
 * 1 + x to 2^k·(1 + f), then log(1 + f) = f − s·(f − R) with s = f/(2 + f) and
 * a rational R), with a correction term for the rounding of 1 + x.
 */
export function log1p(x: number): number {
  const hx = highWord(x) | 0;
  const ax = hx & 0x7fffffff;
  let k = 1;
  let f = 0;
  let hu = 0;
  let c = 0;
  if (hx < 0x3fda827a) {
    // x < 0.41422
    if (ax >= 0x3ff00000) {
      // x <= -1.0
      if (x === -1.0) return -TWO54 / 0;
      return Number.NaN;
    }
    if (ax < 0x3e200000) {
      // |x| < 2^-29
      if (ax < 0x3c900000) return x;
      return x - x * x * 0.5;
    }
    if (hx > 0 || hx <= (0xbfd2bec3 | 0)) {
      // -0.2929 < x < 0.41422
      k = 0;
      f = x;
      hu = 1;
    }
  } else if (hx >= 0x7ff00000) {
    return x + x;
  }
  if (k !== 0) {
    let u: number;
    if (hx < 0x43400000) {
      u = 1.0 + x;
      hu = highWord(u) | 0;
      k = (hu >> 20) - 1023;
      c = k > 0 ? 1.0 - (u - x) : x - (u - 1.0);
      c /= u;
    } else {
      u = x;
      hu = highWord(u) | 0;
      k = (hu >> 20) - 1023;
      c = 0;
    }
    hu &= 0x000fffff;
    if (hu < 0x6a09e) {
      u = withHighWord(u, hu | 0x3ff00000);
    } else {
      k += 1;
      u = withHighWord(u, hu | 0x3fe00000);
      hu = (0x00100000 - hu) >> 2;
    }
    f = u - 1.0;
  }
  const hfsq = 0.5 * f * f;
  if (hu === 0) {
    // |f| < 2^-20
    if (f === 0) {
      if (k === 0) return 0;
      c += k * LOG1P_LN2_LO;
      return k * LOG1P_LN2_HI + c;
    }
    const R = hfsq * (1.0 - 0.66666666666666666 * f);
    if (k === 0) return f - R;
    return k * LOG1P_LN2_HI - (R - (k * LOG1P_LN2_LO + c) - f);
  }
  const s = f / (2.0 + f);
  const z = s * s;
  const R1 = z * LP1;
  const z2 = z * z;
  const R2 = LP2 + z * LP3;
  const z4 = z2 * z2;
  const R3 = LP4 + z * LP5;
  const z6 = z4 * z2;
  const R4 = LP6 + z * LP7;
  const R = R1 + z2 * R2 + z4 * R3 + z6 * R4;
  if (k === 0) return f - (hfsq - s * (hfsq + R));
  return k * LOG1P_LN2_HI - (hfsq - (s * (hfsq + R) + (k * LOG1P_LN2_LO + c)) - f);
}
