/**
 * What an evaluator observed of one arm beside its score (an autoctx
 * addition; the Python implementation neither sends nor reads it): the
 * host's usage figures, the fixture checker's verdict, and the artifacts it
 * kept, each named by the SHA-256 of its bytes. Descriptive only: nothing
 * here enters a decision or a replay of one.
 */

export const METRIC_NAMES = ['latency_ms', 'input_tokens', 'output_tokens', 'cost_usd'] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** Token counts are whole numbers; latency and cost any finite amount >= 0. */
const INTEGER_METRICS: ReadonlySet<string> = new Set(['input_tokens', 'output_tokens']);

export type TrialMetrics = Partial<Record<MetricName, number>>;

export const ARTIFACT_NAME = /^[a-z][a-z0-9_]{0,31}$/;
export const ARTIFACT_DIGEST = /^[0-9a-f]{64}$/;
export const MAX_ARTIFACTS = 8;
/** The largest artifact autoctx accepts (bytes). */
export const MAX_ARTIFACT_BYTES = 1024 * 1024;

export interface ArmObservation {
  metrics?: TrialMetrics;
  check_passed?: boolean;
  /** Artifact name to the SHA-256 (lowercase hex) of its bytes. */
  artifacts?: Record<string, string>;
}

/** Both arms of one recorded pair. */
export interface PairObservation {
  candidate: ArmObservation;
  incumbent: ArmObservation;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function metricProblem(name: string, value: unknown): string | null {
  if (!(METRIC_NAMES as readonly string[]).includes(name))
    return `has an unknown metric ${JSON.stringify(name)} (known: ${METRIC_NAMES.join(', ')})`;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    return `has a metric ${name} that is not a finite number >= 0`;
  if (INTEGER_METRICS.has(name) && !Number.isSafeInteger(value))
    return `has a metric ${name} that is not a whole number`;
  return null;
}

/**
 * Why the observation keys of one arm (`metrics`, `check_passed`,
 * `artifacts`, each optional) are malformed, or null. Keys of `raw` other
 * than these three are not looked at.
 */
export function armObservationProblem(raw: Record<string, unknown>): string | null {
  if (raw.metrics !== undefined) {
    if (!isPlainObject(raw.metrics)) return 'has a "metrics" that is not an object';
    for (const [name, value] of Object.entries(raw.metrics)) {
      const problem = metricProblem(name, value);
      if (problem) return problem;
    }
  }
  if (raw.check_passed !== undefined && typeof raw.check_passed !== 'boolean')
    return 'has a "check_passed" that is not a boolean';
  if (raw.artifacts !== undefined) {
    if (!isPlainObject(raw.artifacts)) return 'has an "artifacts" that is not an object';
    const entries = Object.entries(raw.artifacts);
    if (entries.length > MAX_ARTIFACTS) return `names ${entries.length} artifacts (at most ${MAX_ARTIFACTS})`;
    for (const [name, digest] of entries) {
      if (!ARTIFACT_NAME.test(name))
        return `names an artifact ${JSON.stringify(name.slice(0, 40))} (names match ${ARTIFACT_NAME.source})`;
      if (typeof digest !== 'string' || !ARTIFACT_DIGEST.test(digest))
        return (
          `names artifact ${name} by ${JSON.stringify(String(digest).slice(0, 70))}, ` +
          `not a SHA-256 (64 lowercase hex)`
        );
    }
  }
  return null;
}

/** The observation of one arm from keys already checked by armObservationProblem (absent keys stay absent). */
export function armObservationOf(raw: Record<string, unknown>): ArmObservation {
  const out: ArmObservation = {};
  if (raw.metrics !== undefined) {
    const metrics: TrialMetrics = {};
    for (const name of METRIC_NAMES) {
      const value = (raw.metrics as Record<string, unknown>)[name];
      if (value !== undefined) metrics[name] = value as number;
    }
    out.metrics = metrics;
  }
  if (raw.check_passed !== undefined) out.check_passed = raw.check_passed as boolean;
  if (raw.artifacts !== undefined) {
    const artifacts: Record<string, string> = {};
    for (const name of Object.keys(raw.artifacts as object).sort())
      artifacts[name] = (raw.artifacts as Record<string, string>)[name]!;
    out.artifacts = artifacts;
  }
  return out;
}

/** Whether an arm's observation holds anything (an evaluator that sends none leaves nothing to record). */
export function isEmptyObservation(o: ArmObservation): boolean {
  return o.metrics === undefined && o.check_passed === undefined && o.artifacts === undefined;
}

/** Whether a pair's observation is worth recording: either arm observed something. */
export function pairObserved(p: PairObservation): boolean {
  return !isEmptyObservation(p.candidate) || !isEmptyObservation(p.incumbent);
}
