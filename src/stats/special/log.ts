import {fromWords, highWord, lowWord} from './bits.js';
import {LOG_A, LOG_B, LOG_CHI, LOG_CLO, LOG_INVC, LOG_LN2HI, LOG_LN2LO, LOG_LOGC} from './glibc-data.js';

const [A0, A1, A2, A3, A4] = LOG_A;
const [B0, B1, B2, B3, B4, B5, B6, B7, B8, B9, B10] = LOG_B;
const NEAR_ONE_LO = 1.0 - 0.0625; // 1 - 2^-4
const NEAR_ONE_HI = 1.064697265625; // 1 + 0x1.09p-4
const TWO_52 = fromWords((52 + 1023) << 20, 0);
const OFF_HI = 0x3fe60000;

/**
 * Natural logarithm, following glibc 2.36's algorithm: a degree-11 polynomial
 * near 1; elsewhere x = 2^k·z, log(x) = k·ln2 + log(c) + log1p(z/c − 1) with
 * a 128-entry table, in the same order of operations as its non-FMA build.
 */
export function log(x: number): number {
  if (x >= NEAR_ONE_LO && x < NEAR_ONE_HI) {
    if (x === 1.0) return 0;
    const r = x - 1.0;
    const r2 = r * r;
    const r3 = r * r2;
    let y = r3 * (B1 + r * B2 + r2 * B3 + r3 * (B4 + r * B5 + r2 * B6 + r3 * (B7 + r * B8 + r2 * B9 + r3 * B10)));
    let w = r * 134217728; // 2^27
    const rhi = r + w - w;
    const rlo = r - rhi;
    w = rhi * rhi * B0;
    const hi = r + w;
    let lo = r - hi + w;
    lo += B0 * rlo * (rhi + r);
    y += lo;
    y += hi;
    return y;
  }
  let ixHi = highWord(x);
  const ixLo = lowWord(x);
  const top = ixHi >>> 16;
  if ((top - 0x0010) >>> 0 >= 0x7ff0 - 0x0010) {
    if (x === 0) return Number.NEGATIVE_INFINITY;
    if (x === Number.POSITIVE_INFINITY) return x;
    if (top & 0x8000 || (top & 0x7ff0) === 0x7ff0) return Number.NaN;
    // Subnormal: normalize.
    const scaled = x * TWO_52;
    ixHi = (highWord(scaled) - (52 << 20)) >>> 0;
    return tableLog(ixHi, lowWord(scaled));
  }
  return tableLog(ixHi, ixLo);
}

function tableLog(ixHi: number, ixLo: number): number {
  const tmpHi = (ixHi - OFF_HI) | 0;
  const i = (tmpHi >>> 13) & 127;
  const k = tmpHi >> 20;
  const z = fromWords((ixHi - (tmpHi & 0xfff00000)) >>> 0, ixLo);
  const invc = LOG_INVC[i]!;
  const logc = LOG_LOGC[i]!;
  const r = (z - LOG_CHI[i]! - LOG_CLO[i]!) * invc;
  const kd = k;
  const w = kd * LOG_LN2HI + logc;
  const hi = w + r;
  const lo = w - hi + r + kd * LOG_LN2LO;
  const r2 = r * r;
  return lo + r2 * A0 + r * r2 * (A1 + r * A2 + r2 * (A3 + r * A4)) + hi;
}
