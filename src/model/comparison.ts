import {fail} from '../errors.js';
import {ExactSum} from '../stats/exact-sum.js';
import {ExactMoments} from '../stats/exact-moments.js';
import {intervalFromMoments} from '../stats/interval.js';
import {DEFAULT_CONFIRMATION_POLICY, validateConfirmationPolicy, type ConfirmationPolicy} from './policy.js';
import type {ComparisonResult} from './records.js';
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
    if (t.candidate_digest !== candidate.digest) fail('INVALID_INPUT', 'trial candidate digest does not match the candidate bundle');
    if (t.incumbent_digest !== candidate.parent_digest) fail('INVALID_INPUT', 'trial incumbent digest does not match the candidate parent');
    if (t.evaluator_epoch !== candidate.evaluator_epoch) fail('INVALID_INPUT', 'trial evaluator epoch does not match the candidate bundle');
    if (typeof t.cohort !== 'string' || typeof t.fixture !== 'string' || typeof t.fixture_digest !== 'string' || !t.cohort.trim() || !t.fixture.trim() || !t.fixture_digest.trim()) {
      fail('INVALID_INPUT', 'matched trials require cohort, fixture, and fixture_digest');
    }
    if (typeof t.seed !== 'number' || !Number.isInteger(t.seed)) fail('INVALID_INPUT', 'matched trial seed must be an integer');
    if (typeof t.candidate_score !== 'number' || typeof t.incumbent_score !== 'number' || !Number.isFinite(t.candidate_score) || !Number.isFinite(t.incumbent_score) || !Number.isFinite(trialDelta(t))) {
      fail('INVALID_INPUT', 'matched trial scores and effect must be finite');
    }
    const key = keys[i++]!;
    if (seen.has(key)) fail('INVALID_INPUT', 'duplicate matched trial pair');
    seen.add(key);
  }
}

const isInvalid = (t: MatchedTrial) => t.candidate_valid !== true || t.incumbent_valid !== true;

function meanOf(trials: readonly MatchedTrial[]): number {
  const s = new ExactSum();
  for (const t of trials) s.add(trialDelta(t));
  return s.value() / trials.length;
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
  const p = validateConfirmationPolicy(policy);
  // The key check must run first: a trial whose identity is malformed cannot be hashed.
  for (const t of trials) if (typeof t.seed !== 'number' || !Number.isInteger(t.seed)) fail('INVALID_INPUT', 'matched trial seed must be an integer');
  validateTrials(candidate, trials, keys ?? pairKeysOf(trials));
  const screen = trials.filter((t) => t.lane === 'screen');
  const confirmation = trials.filter((t) => t.lane === 'confirmation');
  const heldout = trials.filter((t) => t.lane === 'heldout');
  const counts = {screen_pairs: screen.length, confirmation_pairs: confirmation.length, heldout_pairs: heldout.length};
  const result = (decision: ComparisonResult['decision'], reason: string, mean: number | null = null, low: number | null = null, high: number | null = null): ComparisonResult => ({
    decision,
    reason,
    ...counts,
    mean_effect: mean,
    confidence_low: low,
    confidence_high: high,
  });
  if (confirmation.length > p.max_confirmation_pairs) fail('INVALID_INPUT', 'confirmation pairs exceed the configured maximum');
  if (screen.length < p.min_screen_pairs) return result('needs_screen', 'insufficient matched screen pairs');
  if (screen.some(isInvalid)) return result('rejected', 'screen validity failure');
  const screenEffect = meanOf(screen);
  if (screenEffect <= p.min_effect) return result('rejected', 'candidate failed the cheap matched screen', screenEffect);
  if (confirmation.length < p.min_confirmation_pairs) return result('needs_confirmation', 'screen passed; more matched confirmation pairs required', screenEffect);
  if (confirmation.some(isInvalid)) return result('rejected', 'confirmation validity failure');
  const moments = new ExactMoments();
  for (const t of confirmation) moments.add(trialDelta(t));
  const maxLooks = p.max_confirmation_pairs - p.min_confirmation_pairs + 1;
  const {mean, low, high} = intervalFromMoments(moments, p.confidence_z, maxLooks);
  if (low === null || high === null) throw new Error('internal: a confirmation interval needs two pairs');
  if (high <= p.min_effect) return result('rejected', 'confirmation confidence interval is below the minimum effect', mean, low, high);
  if (low <= p.min_effect) {
    return confirmation.length >= p.max_confirmation_pairs
      ? result('inconclusive', 'maximum confirmation budget reached without a decisive effect', mean, low, high)
      : result('needs_confirmation', 'confirmation uncertainty overlaps the minimum effect', mean, low, high);
  }
  if (heldout.length < p.min_heldout_pairs) return result('needs_heldout', 'confirmation passed; held-out matched pairs required', mean, low, high);
  if (heldout.some(isInvalid)) return result('rejected', 'held-out validity failure', mean, low, high);
  const heldoutEffect = meanOf(heldout);
  if (heldoutEffect <= p.min_effect) return result('rejected', 'candidate regressed on the held-out lane', heldoutEffect, low, high);
  return result('confirmed', 'matched confirmation and held-out lanes passed', mean, low, high);
}
