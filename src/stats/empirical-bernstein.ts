import {log} from './special/log.js';
import {log1p} from './special/log1p.js';

/**
 * The predictable plug-in empirical-Bernstein bound of Waudby-Smith and Ramdas
 * ("Estimating means of bounded random variables by betting", JRSS-B 2024,
 * Theorem 2), one-sided. For observations X_i in [lo, hi], rescaled to [0, 1],
 * with bets λ_i chosen from the past only,
 *
 *   μ ≥ (Σ λ_i X_i − log(1/α) − Σ v_i ψ(λ_i)) / Σ λ_i
 *
 * holds with probability at least 1 − α, where v_i = 4 (X_i − μ̂_{i−1})²,
 * ψ(λ) = (−log(1 − λ) − λ)/4, μ̂ and σ̂² are the regularized running mean and
 * variance, and λ_t = min(√(2 log(1/α) / (σ̂²_{t−1} t log(1 + t))), 1/2).
 * Unlike Hoeffding, its width scales with the observed spread, not the range.
 * Built only from correctly rounded operations and our own log, so the same
 * inputs give the same bound on every machine.
 */
export class EmpiricalBernsteinSequence {
  private readonly logInvAlpha: number;
  private readonly width: number;
  private t = 0;
  private sumX = 0; // Σ X_i (for μ̂)
  private sumSqDev = 0; // Σ (X_i − μ̂_i)² (for σ̂²)
  private sumLambda = 0;
  private sumLambdaX = 0;
  private sumPenalty = 0;

  constructor(
    alpha: number,
    readonly lo: number,
    readonly hi: number,
  ) {
    if (!(alpha > 0 && alpha < 1)) throw new RangeError('empirical Bernstein needs 0 < alpha < 1');
    if (!(hi > lo)) throw new RangeError('empirical Bernstein needs lo < hi');
    this.logInvAlpha = log(1.0 / alpha);
    this.width = hi - lo;
  }

  get count(): number {
    return this.t;
  }

  add(value: number): void {
    const x = (value - this.lo) / this.width;
    if (!(x >= 0 && x <= 1)) throw new RangeError('observation outside the declared bounds');
    const t = this.t + 1;
    const muPrev = (0.5 + this.sumX) / t; // μ̂_{t−1}
    const sigma2Prev = (0.25 + this.sumSqDev) / t; // σ̂²_{t−1}
    const lambda = Math.min(Math.sqrt((2.0 * this.logInvAlpha) / (sigma2Prev * t * log1p(t))), 0.5);
    const dev = x - muPrev;
    const v = 4.0 * dev * dev;
    const psi = (-log1p(-lambda) - lambda) / 4.0;
    this.sumLambda += lambda;
    this.sumLambdaX += lambda * x;
    this.sumPenalty += v * psi;
    this.sumX += x;
    const muNow = (0.5 + this.sumX) / (t + 1); // μ̂_t
    this.sumSqDev += (x - muNow) * (x - muNow);
    this.t = t;
  }

  /** The lower bound of the mean, in the original units; −∞ before any observation. */
  lowerBound(): number {
    if (this.t === 0) return Number.NEGATIVE_INFINITY;
    const lowX = (this.sumLambdaX - this.logInvAlpha - this.sumPenalty) / this.sumLambda;
    return this.lo + this.width * Math.max(0, lowX);
  }
}

/** The bound over effects taken in the given (evaluation) order. */
export function empiricalBernsteinLowerBound(effects: readonly number[], alpha: number, lo: number, hi: number): number {
  const s = new EmpiricalBernsteinSequence(alpha, lo, hi);
  for (const e of effects) s.add(e);
  return s.lowerBound();
}
