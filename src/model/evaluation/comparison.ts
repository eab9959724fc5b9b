import {fail} from '../../errors.js';
import {ExactSum} from '../../stats/exact-sum.js';
import {ExactMoments} from '../../stats/exact-moments.js';
import {intervalFromMoments} from '../../stats/interval.js';
import {DEFAULT_CONFIRMATION_POLICY, validateConfirmationPolicy, type ConfirmationPolicy} from './policy.js';
import type {ComparisonResult} from '../promotion/records.js';
import {matchedTrialPairKey, trialDelta, type MatchedTrial} from './trial.js';

/** The lineage a comparison is about: the candidate and its parent. */
export interface ComparisonSubject {
  digest: string;
  parent_digest: string | null;
  evaluator_epoch: string;
}

/** The pair key of every trial, in order. */
export function pairKeysOf(trials: readonly MatchedTrial[]): string[] {
  return trials.map((t) => matchedTrialPairKey(t));
}

function validateTrials(candidate: ComparisonSubject, trials: readonly MatchedTrial[], keys: readonly string[]): void {
  const seen = new Set<string>();
  let i = 0;
  for (const t of trials) {
    if (t.candidate_digest !== candidate.digest)
      fail('INVALID_INPUT', 'trial candidate digest does not match the candidate bundle');
    if (t.incumbent_digest !== candidate.parent_digest)
      fail('INVALID_INPUT', 'trial incumbent digest does not match the candidate parent');
    if (t.evaluator_epoch !== candidate.evaluator_epoch)
      fail('INVALID_INPUT', 'trial evaluator epoch does not match the candidate bundle');
    if (
      typeof t.cohort !== 'string' ||
      typeof t.fixture !== 'string' ||
      typeof t.fixture_digest !== 'string' ||
      !t.cohort.trim() ||
      !t.fixture.trim() ||
      !t.fixture_digest.trim()
    ) {
      fail('INVALID_INPUT', 'matched trials require cohort, fixture, and fixture_digest');
    }
    if (typeof t.seed !== 'number' || !Number.isInteger(t.seed))
      fail('INVALID_INPUT', 'matched trial seed must be an integer');
    if (
      typeof t.candidate_score !== 'number' ||
      typeof t.incumbent_score !== 'number' ||
      !Number.isFinite(t.candidate_score) ||
      !Number.isFinite(t.incumbent_score) ||
      !Number.isFinite(trialDelta(t))
    ) {
      fail('INVALID_INPUT', 'matched trial scores and effect must be finite');
    }
    const key = keys[i++]!;
    if (seen.has(key)) fail('INVALID_INPUT', 'duplicate matched trial pair');
    seen.add(key);
  }
}

const isInvalid = (t: MatchedTrial) => t.candidate_valid !== true || t.incumbent_valid !== true;

/** One lane's running figures: its pairs, whether any is invalid, and the exact sum of its effects. */
interface LaneTally {
  n: number;
  invalid: boolean;
  sum: ExactSum;
}

/**
 * The decision of evaluateMatchedTrials, kept up to date one trial at a time:
 * every figure it uses is an exact sum (order does not matter), so the result
 * after n additions equals evaluateMatchedTrials over the same n trials bit
 * for bit, at a cost per trial that does not grow with the trials before it.
 * `add` checks a trial as evaluateMatchedTrials does (for a sequence that is
 * valid as a whole, the two agree on every result).
 */
export class RunningComparison {
  private readonly policy: ConfirmationPolicy;
  private readonly keys = new Set<string>();
  private readonly screen: LaneTally = {n: 0, invalid: false, sum: new ExactSum()};
  private readonly confirmation: LaneTally = {n: 0, invalid: false, sum: new ExactSum()};
  private readonly heldout: LaneTally = {n: 0, invalid: false, sum: new ExactSum()};
  private readonly moments = new ExactMoments();

  constructor(
    private readonly candidate: ComparisonSubject,
    policy: ConfirmationPolicy = DEFAULT_CONFIRMATION_POLICY,
  ) {
    this.policy = validateConfirmationPolicy(policy);
  }

  /** Add one trial (its pair key, when the caller has it). */
  add(t: MatchedTrial, key?: string): void {
    if (typeof t.seed !== 'number' || !Number.isInteger(t.seed))
      fail('INVALID_INPUT', 'matched trial seed must be an integer');
    const k = key ?? matchedTrialPairKey(t);
    validateTrials(this.candidate, [t], [k]);
    if (this.keys.has(k)) fail('INVALID_INPUT', 'duplicate matched trial pair');
    this.keys.add(k);
    this.tally(t);
  }

  /** Add a trial already checked (evaluateMatchedTrials checks the whole sequence first). */
  tally(t: MatchedTrial): void {
    const lane = t.lane === 'screen' ? this.screen : t.lane === 'confirmation' ? this.confirmation : this.heldout;
    lane.n++;
    if (isInvalid(t)) lane.invalid = true;
    const delta = trialDelta(t);
    // The confirmation lane's sum is kept by its moments; the other lanes keep their own.
    if (t.lane === 'confirmation') this.moments.add(delta);
    else lane.sum.add(delta);
  }

  /** The decision over every trial added so far. */
  result(): ComparisonResult {
    const p = this.policy;
    const {screen, confirmation, heldout} = this;
    const counts = {screen_pairs: screen.n, confirmation_pairs: confirmation.n, heldout_pairs: heldout.n};
    const result = (
      decision: ComparisonResult['decision'],
      reason: string,
      mean: number | null = null,
      low: number | null = null,
      high: number | null = null,
    ): ComparisonResult => ({
      decision,
      reason,
      ...counts,
      mean_effect: mean,
      confidence_low: low,
      confidence_high: high,
    });
    if (confirmation.n > p.max_confirmation_pairs)
      fail('INVALID_INPUT', 'confirmation pairs exceed the configured maximum');
    if (screen.n < p.min_screen_pairs) return result('needs_screen', 'insufficient matched screen pairs');
    if (screen.invalid) return result('rejected', 'screen validity failure');
    const screenEffect = screen.sum.value() / screen.n;
    if (screenEffect <= p.min_effect)
      return result('rejected', 'candidate failed the cheap matched screen', screenEffect);
    if (confirmation.n < p.min_confirmation_pairs)
      return result('needs_confirmation', 'screen passed; more matched confirmation pairs required', screenEffect);
    if (confirmation.invalid) return result('rejected', 'confirmation validity failure');
    const maxLooks = p.max_confirmation_pairs - p.min_confirmation_pairs + 1;
    const {mean, low, high} = intervalFromMoments(this.moments, p.confidence_z, maxLooks);
    if (low === null || high === null) throw new Error('internal: a confirmation interval needs two pairs');
    if (high <= p.min_effect)
      return result('rejected', 'confirmation confidence interval is below the minimum effect', mean, low, high);
    if (low <= p.min_effect) {
      return confirmation.n >= p.max_confirmation_pairs
        ? result('inconclusive', 'maximum confirmation budget reached without a decisive effect', mean, low, high)
        : result('needs_confirmation', 'confirmation uncertainty overlaps the minimum effect', mean, low, high);
    }
    if (heldout.n < p.min_heldout_pairs)
      return result('needs_heldout', 'confirmation passed; held-out matched pairs required', mean, low, high);
    if (heldout.invalid) return result('rejected', 'held-out validity failure', mean, low, high);
    const heldoutEffect = heldout.sum.value() / heldout.n;
    if (heldoutEffect <= p.min_effect)
      return result('rejected', 'candidate regressed on the held-out lane', heldoutEffect, low, high);
    return result('confirmed', 'matched confirmation and held-out lanes passed', mean, low, high);
  }
}

/**
 * The screen → confirmation → held-out decision of the reference, exactly:
 * every validation, every branch, every reason string, a strict "> min_effect"
 * everywhere, and the confirmation interval spending its alpha over every
 * possible look (max − min + 1).
 */
export function evaluateMatchedTrials(
  candidate: ComparisonSubject,
  trials: readonly MatchedTrial[],
  policy: ConfirmationPolicy = DEFAULT_CONFIRMATION_POLICY,
  /** Pair keys already computed for these trials (callers that need them too pass them in). */
  keys?: readonly string[],
): ComparisonResult {
  const running = new RunningComparison(candidate, policy);
  // The key check must run first: a trial whose identity is malformed cannot be hashed.
  for (const t of trials)
    if (typeof t.seed !== 'number' || !Number.isInteger(t.seed))
      fail('INVALID_INPUT', 'matched trial seed must be an integer');
  validateTrials(candidate, trials, keys ?? pairKeysOf(trials));
  for (const t of trials) running.tally(t);
  return running.result();
}
