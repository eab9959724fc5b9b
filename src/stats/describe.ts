import {max, mean, median, min, quantileSorted, standardDeviation} from 'simple-statistics';

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
