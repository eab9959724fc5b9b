import {NEW_PLAN_CONFIRMATION_POLICY, type ConfirmationPolicy} from '../../model/evaluation/policy.js';
import {ExactMoments} from '../../stats/exact-moments.js';
import {intervalFromMoments} from '../../stats/interval.js';
import {Random} from '../../stats/rng.js';

/**
 * How the per-pair difference (candidate score − parent score) is drawn:
 * continuous (normal, never tied) or discrete as an LLM grader's scores are
 * (the two arms get the same grade half the time; otherwise one grade step
 * up or down). Either way its mean is `effect` standard deviations of itself.
 */
export type ScoreKind = 'continuous' | 'discrete';
export const SCORE_KINDS: readonly ScoreKind[] = ['continuous', 'discrete'];
/** The share of discrete pairs whose two arms get the same grade. */
export const DISCRETE_TIE_RATE = 0.5;
/** True effects of the screen rows, in standard deviations of the per-pair difference: a clear loser, two wins. */
export const SCREEN_EFFECTS: readonly number[] = [-0.5, 0.25, 0.5];
/** The screen sizes measured. */
export const SCREEN_SIZES: readonly number[] = [2, 4, 8, 12, 14, 16, 20];

/** A sampler of one per-pair difference with mean `effect` and standard deviation 1. */
function sampler(kind: ScoreKind, effect: number, rng: Random): () => number {
  if (kind === 'continuous') return () => rng.gauss(effect, 1);
  // d ∈ {−1, 0, +1}, P(0) = t, P(+1) − P(−1) = m; mean m, variance (1 − t) − m², so m = k·√((1 − t)/(1 + k²)).
  const spread = 1 - DISCRETE_TIE_RATE;
  const m = effect * Math.sqrt(spread / (1 + effect * effect));
  const up = (spread + m) / 2;
  const sd = Math.sqrt(spread - m * m);
  return () => {
    const u = rng.random();
    const step = u < up ? 1 : u < spread ? -1 : 0;
    return step / sd;
  };
}

/** One comparison under the ordinary decision rule (z, looks, strict "> min_effect"): its outcome and pairs used. */
function comparison(
  draw: () => number,
  p: ConfirmationPolicy,
): {passed_screen: boolean; confirmed: boolean; pairs: number} {
  let screen = 0;
  for (let i = 0; i < p.min_screen_pairs; i++) screen += draw();
  // Grades are small multiples of one step, so this sum is exact; a continuous sum's rounding cannot matter here.
  if (screen / p.min_screen_pairs <= p.min_effect)
    return {passed_screen: false, confirmed: false, pairs: p.min_screen_pairs};
  const moments = new ExactMoments();
  const looks = p.max_confirmation_pairs - p.min_confirmation_pairs + 1;
  for (let n = 1; n <= p.max_confirmation_pairs; n++) {
    moments.add(draw());
    if (n < p.min_confirmation_pairs) continue;
    const {low, high} = intervalFromMoments(moments, p.confidence_z, looks);
    const pairs = p.min_screen_pairs + n;
    if (high !== null && high <= p.min_effect) return {passed_screen: true, confirmed: false, pairs};
    if (low !== null && low > p.min_effect) {
      let held = 0;
      for (let i = 0; i < p.min_heldout_pairs; i++) held += draw();
      return {
        passed_screen: true,
        confirmed: held / p.min_heldout_pairs > p.min_effect,
        pairs: pairs + p.min_heldout_pairs,
      };
    }
  }
  return {passed_screen: true, confirmed: false, pairs: p.min_screen_pairs + p.max_confirmation_pairs};
}

export interface ScreenRow {
  scores: ScoreKind;
  effect_sd: number;
  screen_pairs: number;
  /** The share of candidates the screen lets through to confirmation. */
  pass_rate: number;
  /** Pairs evaluated per candidate until the comparison decides (or its budget is spent). */
  avg_pairs: number;
}

export interface SizingRow {
  effect_sd: number;
  /** The default (6: a look after every pair from the sixth) or max_confirmation_pairs (one look). */
  min_confirmation_pairs: number;
  max_confirmation_pairs: number;
  /** The fewest fixtures (one seed each) a plan needs for this policy. */
  fixtures_needed: number;
  confirm_rate: number;
  avg_pairs: number;
}

/** The fewest fixtures whose default lane split (screen, held-out max(min, ⌊n/5⌋), the rest) reaches the policy. */
export function fixturesNeeded(p: ConfirmationPolicy): number {
  for (let n = 1; ; n++)
    if (n - p.min_screen_pairs - Math.max(p.min_heldout_pairs, Math.floor(n / 5)) >= p.max_confirmation_pairs) return n;
}

function simulate(kind: ScoreKind, effect: number, p: ConfirmationPolicy, reps: number, seed: number) {
  const rng = new Random(seed);
  const draw = sampler(kind, effect, rng);
  let passed = 0;
  let confirmed = 0;
  let pairs = 0;
  for (let r = 0; r < reps; r++) {
    const c = comparison(draw, p);
    if (c.passed_screen) passed++;
    if (c.confirmed) confirmed++;
    pairs += c.pairs;
  }
  return {pass_rate: passed / reps, confirm_rate: confirmed / reps, avg_pairs: pairs / reps};
}

/**
 * The screen's false rejection and its cost: every score kind × effect ×
 * screen size, the rest of the policy the new-plan default.
 */
export function screenRows(reps: number, seed: number): ScreenRow[] {
  const rows: ScreenRow[] = [];
  for (const scores of SCORE_KINDS)
    for (const effect_sd of SCREEN_EFFECTS)
      for (const screen_pairs of SCREEN_SIZES) {
        const p = {...NEW_PLAN_CONFIRMATION_POLICY, min_screen_pairs: screen_pairs};
        const {pass_rate, avg_pairs} = simulate(scores, effect_sd, p, reps, seed);
        rows.push({scores, effect_sd, screen_pairs, pass_rate, avg_pairs});
      }
  return rows;
}

export const SIZING_EFFECTS: readonly number[] = [0.25, 0.5, 0.75, 1.0];
export const SIZING_BUDGETS: readonly number[] = [10, 20, 40, 80];

/**
 * How often one candidate with a true effect is confirmed, per confirmation
 * budget, under the new-plan defaults: looking after every pair from the
 * sixth (the default), and looking once at the end (min = max).
 */
export function sizingRows(reps: number, seed: number): SizingRow[] {
  const rows: SizingRow[] = [];
  for (const effect_sd of SIZING_EFFECTS)
    for (const max_confirmation_pairs of SIZING_BUDGETS)
      for (const min_confirmation_pairs of [
        NEW_PLAN_CONFIRMATION_POLICY.min_confirmation_pairs,
        max_confirmation_pairs,
      ]) {
        const p = {...NEW_PLAN_CONFIRMATION_POLICY, min_confirmation_pairs, max_confirmation_pairs};
        const {confirm_rate, avg_pairs} = simulate('continuous', effect_sd, p, reps, seed);
        rows.push({
          effect_sd,
          min_confirmation_pairs,
          max_confirmation_pairs,
          fixtures_needed: fixturesNeeded(p),
          confirm_rate,
          avg_pairs,
        });
      }
  return rows;
}
