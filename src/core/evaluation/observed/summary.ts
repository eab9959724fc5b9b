import {
  METRIC_NAMES,
  type ArmObservation,
  type MetricName,
  type PairObservation,
} from '../../../model/evaluation/observations.js';
import {describeValues, VALUE_SUMMARY_METHOD, type ValueSummary} from '../../../stats/describe.js';

/** What one arm's observations come to over the recorded pairs: each metric's summary and the checker's verdicts. */
export interface ArmObserved {
  metrics: Partial<Record<MetricName, ValueSummary>>;
  /** How many pairs' checker passed and failed for this arm (pairs without a verdict are in neither). */
  checks: {passed: number; failed: number};
}

/** Both arms' observations summarized (descriptive only: no decision or replay reads them). */
export interface ObservedSummary {
  method: string;
  /** Recorded pairs that observed something. */
  pairs: number;
  candidate: ArmObserved;
  incumbent: ArmObserved;
}

function armObserved(arms: readonly ArmObservation[]): ArmObserved {
  const metrics: Partial<Record<MetricName, ValueSummary>> = {};
  for (const name of METRIC_NAMES) {
    const summary = describeValues(arms.flatMap((a) => (a.metrics?.[name] === undefined ? [] : [a.metrics[name]])));
    if (summary) metrics[name] = summary;
  }
  return {
    metrics,
    checks: {
      passed: arms.filter((a) => a.check_passed === true).length,
      failed: arms.filter((a) => a.check_passed === false).length,
    },
  };
}

/**
 * The observations of the recorded pairs (those of `trials`), summarized per
 * arm; null when none of them observed anything.
 */
export function summarizeObservations(
  trials: ReadonlyArray<{pair_key: string}>,
  observations: ReadonlyMap<string, PairObservation> | null,
): ObservedSummary | null {
  if (!observations || observations.size === 0) return null;
  const pairs = trials.flatMap((t) => {
    const o = observations.get(t.pair_key);
    return o ? [o] : [];
  });
  if (pairs.length === 0) return null;
  return {
    method: VALUE_SUMMARY_METHOD,
    pairs: pairs.length,
    candidate: armObserved(pairs.map((p) => p.candidate)),
    incumbent: armObserved(pairs.map((p) => p.incumbent)),
  };
}

/** A figure as people read it: whole numbers whole, others to 4 significant digits. */
export const figure = (x: number): string => (Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(4))));

/** One arm's figures on one line: "latency_ms median 1200 p90 1260 mean 1210 (n 12), ..., checks 11/12 passed". */
export function armObservedLine(a: ArmObserved): string {
  const parts = METRIC_NAMES.flatMap((name) => {
    const s = a.metrics[name];
    return s ? [`${name} median ${figure(s.median)} p90 ${figure(s.p90)} mean ${figure(s.mean)} (n ${s.n})`] : [];
  });
  const checked = a.checks.passed + a.checks.failed;
  if (checked > 0) parts.push(`checks ${a.checks.passed}/${checked} passed`);
  return parts.length > 0 ? parts.join(', ') : 'nothing measured';
}
