import {log} from './special/log.js';
import {log1p} from './special/log1p.js';

/**
 * A one-sided test by betting for the mean of bounded observations
 * (Waudby-Smith and Ramdas, "Estimating means of bounded random variables by
 * betting", JRSS-B 2024; the aGRAPA bet). Observations X_i in [lo, hi] are
 * rescaled to [0, 1]; m0 is the null boundary (the minimum effect, rescaled).
 * The capital K_t = Π (1 + λ_i (X_i − m0)) with bets λ_i ∈ [0, c/m0] chosen
 * from the past only is a nonnegative supermartingale when the mean is at most
 * m0, so P(K_t ≥ 1/α) ≤ α at any time (Ville's inequality): rejecting there
 * shows the mean exceeds the minimum effect at level α.
 *
 * The bet is the approximate Kelly bet (μ̂ − m0)/(σ̂² + (μ̂ − m0)²) from the
 * regularized running mean μ̂ and variance σ̂², capped at c/m0 with c = 0.8 so
 * that one worst-case observation costs at most 80% of the capital. Unlike
 * Hoeffding's bound, whose width depends only on the range, the capital grows
 * at a rate set by the observed mean and spread.
 *
 * Built from correctly rounded operations and our own log, so the same inputs
 * give the same decision on every machine.
 */
export class BettingTest {
  private readonly threshold: number;
  private readonly width: number;
  private readonly m0: number;
  private readonly maxBet: number;
  private t = 0;
  private sumX = 0;
  private sumSqDev = 0;
  private logCapital = 0;

  static readonly CAP = 0.8;

  constructor(
    alpha: number,
    readonly lo: number,
    readonly hi: number,
    minEffect: number,
  ) {
    if (!(alpha > 0 && alpha < 1)) throw new RangeError('the betting test needs 0 < alpha < 1');
    if (!(hi > lo)) throw new RangeError('the betting test needs lo < hi');
    this.width = hi - lo;
    this.m0 = (minEffect - lo) / this.width;
    if (!(this.m0 > 0 && this.m0 < 1))
      throw new RangeError('the minimum effect must lie strictly inside the declared bounds');
    this.threshold = log(1.0 / alpha);
    this.maxBet = BettingTest.CAP / this.m0;
  }

  get count(): number {
    return this.t;
  }

  add(value: number): void {
    const x = (value - this.lo) / this.width;
    if (!(x >= 0 && x <= 1)) throw new RangeError('observation outside the declared bounds');
    const t = this.t;
    const mu = (0.5 + this.sumX) / (t + 1);
    const sigma2 = (0.25 + this.sumSqDev) / (t + 1);
    const edge = mu - this.m0;
    const bet = edge <= 0 ? 0 : Math.min(edge / (sigma2 + edge * edge), this.maxBet);
    this.logCapital += log1p(bet * (x - this.m0));
    this.sumX += x;
    const muNow = (0.5 + this.sumX) / (t + 2);
    this.sumSqDev += (x - muNow) * (x - muNow);
    this.t = t + 1;
  }

  /** log of the capital so far. */
  get logWealth(): number {
    return this.logCapital;
  }

  /**
   * Futility: the bets have not made money (capital at or below its start).
   * Stopping then, without promoting, can only lower the error rate; it saves
   * the evaluations a candidate that is not better would otherwise consume.
   */
  futile(): boolean {
    return this.logCapital <= 0;
  }

  /** True once the capital reaches 1/α: the mean exceeds the minimum effect. */
  rejects(): boolean {
    return this.logCapital >= this.threshold;
  }
}

/** Whether the betting test rejects "mean ≤ minEffect" over these observations, in this order. */
export function bettingTestRejects(
  effects: readonly number[],
  alpha: number,
  lo: number,
  hi: number,
  minEffect: number,
): boolean {
  const test = new BettingTest(alpha, lo, hi, minEffect);
  for (const e of effects) test.add(e);
  return test.rejects();
}
