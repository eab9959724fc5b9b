import {highWord, withLowWord} from './bits.js';
import {exp} from './exp.js';
import {ERFC_ERX, ERFC_PA, ERFC_PP, ERFC_QA, ERFC_QQ, ERFC_RA, ERFC_RB, ERFC_SA, ERFC_SB} from './glibc-data.js';

const pp = ERFC_PP;
const qq = ERFC_QQ;
const pa = ERFC_PA;
const qa = ERFC_QA;
const ra = ERFC_RA;
const sa = ERFC_SA;
const rb = ERFC_RB;
const sb = ERFC_SB;
const TINY = 1e-300;

/**
 * The complementary error function, following glibc 2.36's s_erf.c: rational
 * approximations on |x| < 0.84375, [0.84375, 1.25), [1.25, 1/0.35) and
 * [1/0.35, 28), the last two as exp(−z² − 0.5625)·exp((z − x)(z + x) + R/S)/x
 * with z = x truncated to its high word.
 */
export function erfc(x: number): number {
  const hx = highWord(x) | 0;
  const ix = hx & 0x7fffffff;
  if (ix >= 0x7ff00000) {
    if (Number.isNaN(x)) return x;
    return x > 0 ? 0 : 2;
  }
  if (ix < 0x3feb0000) {
    // |x| < 0.84375
    if (ix < 0x3c700000) return 1.0 - x;
    const z = x * x;
    const r1 = pp[0] + z * pp[1];
    const z2 = z * z;
    const r2 = pp[2] + z * pp[3];
    const z4 = z2 * z2;
    const s1 = 1.0 + z * qq[1];
    const s2 = qq[2] + z * qq[3];
    const s3 = qq[4] + z * qq[5];
    const r = r1 + z2 * r2 + z4 * pp[4];
    const s = s1 + z2 * s2 + z4 * s3;
    const y = r / s;
    if (hx < 0x3fd00000) return 1.0 - (x + x * y);
    let rr = x * y;
    rr += x - 0.5;
    return 0.5 - rr;
  }
  if (ix < 0x3ff40000) {
    // 0.84375 <= |x| < 1.25
    const s = Math.abs(x) - 1.0;
    const P1 = pa[0] + s * pa[1];
    const s2 = s * s;
    const Q1 = 1.0 + s * qa[1];
    const s4 = s2 * s2;
    const P2 = pa[2] + s * pa[3];
    const s6 = s4 * s2;
    const Q2 = qa[2] + s * qa[3];
    const P3 = pa[4] + s * pa[5];
    const Q3 = qa[4] + s * qa[5];
    const P = P1 + s2 * P2 + s4 * P3 + s6 * pa[6];
    const Q = Q1 + s2 * Q2 + s4 * Q3 + s6 * qa[6];
    if (hx >= 0) return 1.0 - ERFC_ERX - P / Q;
    return 1.0 + (ERFC_ERX + P / Q);
  }
  if (ix < 0x403c0000) {
    // |x| < 28
    const ax = Math.abs(x);
    const s = 1.0 / (ax * ax);
    let R: number;
    let S: number;
    if (ix < 0x4006db6d) {
      // |x| < 1/0.35
      const R1 = ra[0] + s * ra[1];
      const s2 = s * s;
      const S1 = 1.0 + s * sa[1];
      const s4 = s2 * s2;
      const R2 = ra[2] + s * ra[3];
      const s6 = s4 * s2;
      const S2 = sa[2] + s * sa[3];
      const s8 = s4 * s4;
      const R3 = ra[4] + s * ra[5];
      const S3 = sa[4] + s * sa[5];
      const R4 = ra[6] + s * ra[7];
      const S4 = sa[6] + s * sa[7];
      R = R1 + s2 * R2 + s4 * R3 + s6 * R4;
      S = S1 + s2 * S2 + s4 * S3 + s6 * S4 + s8 * sa[8];
    } else {
      // |x| >= 1/0.35
      if (hx < 0 && ix >= 0x40180000) return 2.0 - TINY; // x < -6
      const R1 = rb[0] + s * rb[1];
      const s2 = s * s;
      const S1 = 1.0 + s * sb[1];
      const s4 = s2 * s2;
      const R2 = rb[2] + s * rb[3];
      const s6 = s4 * s2;
      const S2 = sb[2] + s * sb[3];
      const R3 = rb[4] + s * rb[5];
      const S3 = sb[4] + s * sb[5];
      const S4 = sb[6] + s * sb[7];
      R = R1 + s2 * R2 + s4 * R3 + s6 * rb[6];
      S = S1 + s2 * S2 + s4 * S3 + s6 * S4;
    }
    const z = withLowWord(ax, 0);
    const r = exp(-z * z - 0.5625) * exp((z - ax) * (z + ax) + R / S);
    if (hx > 0) return r / ax;
    return 2.0 - r / ax;
  }
  if (hx > 0) return TINY * TINY;
  return 2.0 - TINY;
}
