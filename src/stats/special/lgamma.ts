import {log} from './log.js';

/**
 * ln Γ(x) for x > 0 as CPython 3.11's math.lgamma computes it (its own
 * Lanczos approximation with g ≈ 6.0247 and a rational sum of 13 terms, not
 * libm's lgamma), with our log, so results equal Python's bit for bit.
 */
const LANCZOS_G = 6.024680040776729583740234375;
const NUM = [
  23531376880.41075968857200767445163675473, 42919803642.64909876895789904700198885093,
  35711959237.35566804944018545154716670596, 17921034426.03720969991975575445893111267,
  6039542586.35202800506429164430729792107, 1439720407.311721673663223072794912393972,
  248874557.8620541565114603864132294232163, 31426415.58540019438061423162831820536287,
  2876370.628935372441225409051620849613599, 186056.2653952234950402949897160456992822,
  8071.672002365816210638002902272250613822, 210.8242777515793458725097339207133627117,
  2.506628274631000270164908177133837338626,
];
const DEN = [
  0.0, 39916800.0, 120543840.0, 150917976.0, 105258076.0, 45995730.0, 13339535.0, 2637558.0, 357423.0, 32670.0, 1925.0,
  66.0, 1.0,
];

function lanczosSum(x: number): number {
  let num = 0.0;
  let den = 0.0;
  if (x < 5.0) {
    for (let i = NUM.length - 1; i >= 0; i--) {
      num = num * x + NUM[i]!;
      den = den * x + DEN[i]!;
    }
  } else {
    for (let i = 0; i < NUM.length; i++) {
      num = num / x + NUM[i]!;
      den = den / x + DEN[i]!;
    }
  }
  return num / den;
}

export function lgamma(x: number): number {
  if (Number.isNaN(x)) return x;
  if (!Number.isFinite(x)) return Number.POSITIVE_INFINITY;
  if (x <= 0) throw new RangeError('lgamma: only positive arguments are supported');
  if (x === Math.floor(x) && x <= 2.0) return 0.0;
  if (x < 1e-20) return -log(x);
  let r = log(lanczosSum(x)) - LANCZOS_G;
  r += (x - 0.5) * (log(x + LANCZOS_G - 0.5) - 1);
  return r;
}
