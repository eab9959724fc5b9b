import {max, mean, median, min, quantileSorted, sampleStandardDeviation, standardDeviation} from 'simple-statistics';
import {roundRatio, summaryStatistic, type SummaryStatistic} from './quantile.js';
import {studentTUpperQuantile} from './student-t.js';

/**
 * Descriptive summaries for people (reports): simple-statistics, by lane.
 * Nothing here enters a decision or a replay; those use the exact sums of
 * src/stats and src/model/evaluation/comparison.ts.
 */
export interface LaneSummary {
  lane: string;
  n: number;
  mean: number;
  median: number;
  q1: number;
  q3: number;
  sd: number | null;
  min: number;
  max: number;
}

export function describeEffects(effects: ReadonlyArray<{lane: string; effect: number}>): LaneSummary[] {
  const lanes = ['screen', 'confirmation', 'heldout'];
  const out: LaneSummary[] = [];
  for (const lane of lanes) {
    const xs = effects.filter((e) => e.lane === lane).map((e) => e.effect);
    if (xs.length === 0) continue;
    const sorted = [...xs].sort((a, b) => a - b);
    out.push({
      lane,
      n: xs.length,
      mean: mean(xs),
      median: median(sorted),
      q1: quantileSorted(sorted, 0.25),
      q3: quantileSorted(sorted, 0.75),
      sd: xs.length > 1 ? standardDeviation(xs) : null,
      min: min(xs),
      max: max(xs),
    });
  }
  return out;
}

/** One arm's scores over every recorded pair: its mean and a 95% Student-t interval (null with one pair). */
export interface ArmScore {
  n: number;
  mean: number;
  low: number | null;
  high: number | null;
}

/** Both arms' absolute scores, with the method named (for people; never part of a decision). */
export interface ArmScores {
  method: string;
  level: number;
  candidate: ArmScore;
  incumbent: ArmScore;
}

export const ARM_INTERVAL_METHOD = '95% Student-t interval per arm, over every recorded pair (all lanes)';

function armScore(xs: readonly number[]): ArmScore {
  const m = mean(xs as number[]);
  if (xs.length < 2) return {n: xs.length, mean: m, low: null, high: null};
  const half =
    (studentTUpperQuantile(0.025, xs.length - 1) * sampleStandardDeviation(xs as number[])) / Math.sqrt(xs.length);
  return {n: xs.length, mean: m, low: m - half, high: m + half};
}

/** Each arm's mean score and its interval, from the matched trials; null when there are none. */
export function describeArms(
  trials: ReadonlyArray<{candidate_score: number; incumbent_score: number}>,
): ArmScores | null {
  if (trials.length === 0) return null;
  return {
    method: ARM_INTERVAL_METHOD,
    level: 0.95,
    candidate: armScore(trials.map((t) => t.candidate_score)),
    incumbent: armScore(trials.map((t) => t.incumbent_score)),
  };
}

/** A descriptive summary of some values: how many, their mean, median and 90th percentile (simple-statistics). */
export interface ValueSummary {
  n: number;
  mean: number;
  median: number;
  p90: number;
}

export const VALUE_SUMMARY_METHOD =
  'mean, median and 90th percentile (Hyndman-Fan definition 7, computed exactly as the guardrail gate computes ' +
  'them, then rounded once) per arm over the pairs that measured it';

/** The summary of some values, or null when there are none (descriptive only: never part of a decision or a gate). */
export function describeValues(xs: readonly number[]): ValueSummary | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  // The same exact statistics the guardrail gate compares, so what status shows is what the gate checked.
  const at = (stat: SummaryStatistic) => roundRatio(summaryStatistic(stat, sorted));
  return {n: xs.length, mean: at('mean'), median: at('median'), p90: at('p90')};
}
