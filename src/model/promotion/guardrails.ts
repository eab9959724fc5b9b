import {stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {METRIC_NAMES, type MetricName} from '../evaluation/observations.js';
import {
  affineRatio,
  compareRatio,
  ratioOf,
  roundRatio,
  summaryStatistic,
  type Ratio,
  type SummaryStatistic,
} from '../../stats/quantile.js';

/**
 * Promotion guardrails: optional limits on the candidate arm's latency, tokens or cost relative to the incumbent
 * arm's, bound in the plan's additions and checked before promotion. Never part of the comparison decision.
 *
 * Grammar (spaces around the tokens are free): `<stat>(<metric>) <= <bound>` with
 *   stat    median | mean | p90 | p95 | max
 *   metric  latency_ms | input_tokens | output_tokens | cost_usd
 *   bound   `<decimal>x`   at most that multiple of the incumbent's same statistic (1.2x)
 *           `±<decimal>%`  at most the incumbent's statistic plus (or minus) that share of it (+10%)
 *           `±<decimal>`   at most the incumbent's statistic plus (or minus) that amount (+500)
 * A decimal is digits with an optional fraction (at most 15 digits in all), no exponent.
 */
export const GUARDRAIL_STATS = ['median', 'mean', 'p90', 'p95', 'max'] as const satisfies readonly SummaryStatistic[];
/** The metrics a guardrail may name: those an evaluator answer may carry. */
export const GUARDRAIL_METRICS = METRIC_NAMES;
export type GuardrailMetric = MetricName;

export interface Guardrail {
  stat: SummaryStatistic;
  metric: GuardrailMetric;
  bound: {kind: 'ratio' | 'percent' | 'absolute'; negative: boolean; digits: bigint; decimals: number};
  /** The canonical spelling (what the plan stores). */
  text: string;
}

const GRAMMAR =
  '<stat>(<metric>) <= <bound>, with stat median|mean|p90|p95|max, metric ' +
  'latency_ms|input_tokens|output_tokens|cost_usd and bound 1.2x, +10% or +500';
const EXPRESSION = /^\s*([a-z0-9]+)\s*\(\s*([a-z_]+)\s*\)\s*<=\s*([+-]?)(\d+(?:\.\d+)?)\s*(x|%)?\s*$/;

/** Parse one guardrail expression; a malformed one is refused (INVALID_INPUT) with the grammar in the message. */
export function parseGuardrail(expression: string): Guardrail {
  const bad = (why: string): never =>
    fail('INVALID_INPUT', `--guardrail ${JSON.stringify(expression)}: ${why} (expected ${GRAMMAR})`);
  const m = EXPRESSION.exec(expression);
  if (!m) return bad('not a guardrail expression');
  const [, stat, metric, sign, number, unit] = m as unknown as [string, string, string, string, string, string?];
  if (!(GUARDRAIL_STATS as readonly string[]).includes(stat)) bad(`unknown statistic "${stat}"`);
  if (!(GUARDRAIL_METRICS as readonly string[]).includes(metric)) bad(`unknown metric "${metric}"`);
  const [whole, fraction = ''] = number.split('.');
  const decimalsText = fraction.replace(/0+$/, '');
  const digitsText = `${whole}${decimalsText}`.replace(/^0+(?=\d)/, '');
  if (digitsText.length > 15) bad('a bound has at most 15 digits');
  const digits = BigInt(digitsText);
  const kind = unit === 'x' ? 'ratio' : unit === '%' ? 'percent' : 'absolute';
  if (kind === 'ratio' && sign !== '') bad('a ratio bound has no sign (write 1.2x)');
  if (kind === 'ratio' && digits === 0n) bad('a ratio bound must be above 0');
  if (kind !== 'ratio' && sign === '')
    bad(`a ${kind === 'percent' ? 'share' : 'difference'} needs its sign (write +${number}${unit ?? ''})`);
  const negative = sign === '-' && digits !== 0n;
  if (kind === 'percent' && negative && digits >= 100n * 10n ** BigInt(decimalsText.length))
    bad('a share below the incumbent must be above -100%');
  const decimals = decimalsText.length;
  const padded = digitsText.padStart(decimals + 1, '0');
  const abs = decimals === 0 ? padded : `${padded.slice(0, -decimals)}.${padded.slice(-decimals)}`;
  const boundText = kind === 'ratio' ? `${abs}x` : `${negative ? '-' : '+'}${abs}${kind === 'percent' ? '%' : ''}`;
  return {
    stat: stat as SummaryStatistic,
    metric: metric as GuardrailMetric,
    bound: {kind, negative, digits, decimals},
    text: `${stat}(${metric}) <= ${boundText}`,
  };
}

/**
 * The guardrails a plan binds from the expressions given: each parsed, in canonical spelling, without repeats, sorted
 * (so the order of the flags does not matter).
 */
export function guardrailSet(expressions: readonly string[]): string[] {
  return [...new Set(expressions.map((e) => parseGuardrail(e).text))].sort();
}

/**
 * The largest value the candidate's statistic may take, exactly: the incumbent's statistic times the ratio, times
 * (1 ± the share), or plus (minus) the amount.
 */
export function exactLimit(g: Guardrail, incumbent: Ratio): Ratio {
  const {kind, negative, digits, decimals} = g.bound;
  const scale = 10n ** BigInt(decimals);
  const signed = negative ? -digits : digits;
  if (kind === 'ratio') return affineRatio(incumbent, digits, 0n, scale);
  if (kind === 'percent') return affineRatio(incumbent, 100n * scale + signed, 0n, 100n * scale);
  return affineRatio(incumbent, scale, signed, scale);
}

/** A value as recorded and shown: rounded once to the nearest double, clamped to the finite doubles. */
function shown(x: Ratio): number {
  const v = roundRatio(x);
  return Math.min(Math.max(v, -Number.MAX_VALUE), Number.MAX_VALUE);
}

/** The limit for an incumbent statistic given as a double, rounded as recorded. */
export function guardrailLimit(g: Guardrail, incumbent: number): number {
  return shown(exactLimit(g, ratioOf(incumbent)));
}

/** The metrics recorded for one arm of one pair (trial_observations.json). */
export type ArmMetrics = Partial<Record<GuardrailMetric, number>>;

/** One pair the decision used, with what was observed of each arm (null: nothing recorded for the pair). */
export interface ObservedPair {
  pair_key: string;
  observed: {candidate: {metrics?: ArmMetrics}; incumbent: {metrics?: ArmMetrics}} | null;
}

/** One guardrail's verdict. */
export interface GuardrailVerdict {
  guardrail: string;
  /** pass: measured on every pair and within its limit; fail: beyond it; unmeasured: a pair lacks the metric. */
  verdict: 'pass' | 'fail' | 'unmeasured';
  pairs: number;
  /** Pairs where either arm lacks the metric (any makes the verdict unmeasured). */
  missing_pairs: number;
  /**
   * The candidate's and the incumbent's statistic and the limit, each rounded once to a double; the verdict compares
   * the exact values (null when unmeasured).
   */
  candidate: number | null;
  incumbent: number | null;
  limit: number | null;
}

/**
 * Each guardrail's verdict over the pairs the decision used. A guardrail is measured only when every one of those
 * pairs has the metric for both arms (and there is at least one pair): a metric missing anywhere fails closed.
 */
export function evaluateGuardrails(guardrails: readonly string[], pairs: readonly ObservedPair[]): GuardrailVerdict[] {
  return guardrails.map((text) => {
    const g = parseGuardrail(text);
    const candidate: number[] = [];
    const incumbent: number[] = [];
    let missing = 0;
    for (const p of pairs) {
      const c = p.observed?.candidate.metrics?.[g.metric];
      const i = p.observed?.incumbent.metrics?.[g.metric];
      if (c === undefined || i === undefined || !Number.isFinite(c) || !Number.isFinite(i)) missing++;
      else {
        candidate.push(c);
        incumbent.push(i);
      }
    }
    const base = {guardrail: g.text, pairs: pairs.length, missing_pairs: missing};
    if (missing > 0 || pairs.length === 0)
      return {...base, verdict: 'unmeasured', candidate: null, incumbent: null, limit: null};
    const c = summaryStatistic(g.stat, candidate);
    const i = summaryStatistic(g.stat, incumbent);
    const limit = exactLimit(g, i);
    const verdict = compareRatio(c, limit) <= 0 ? 'pass' : 'fail';
    return {...base, verdict, candidate: shown(c), incumbent: shown(i), limit: shown(limit)};
  });
}

/** One line per verdict, for people: `p90(latency_ms) <= +10%: pass (candidate 1200, limit 1320, incumbent 1200)`. */
export function verdictLine(v: GuardrailVerdict): string {
  if (v.verdict === 'unmeasured')
    return (
      `${v.guardrail}: unmeasured (${v.pairs === 0 ? 'no pairs' : `${v.missing_pairs} of ${v.pairs} pairs`} ` +
      `without the metric for both arms)`
    );
  return `${v.guardrail}: ${v.verdict} (candidate ${v.candidate}, limit ${v.limit}, incumbent ${v.incumbent})`;
}

/**
 * candidates/<digest>/promotion_guardrails.json: the gate's result, written with the promotion it allowed (an
 * autoctx addition; the promotion record keeps the Python implementation's shape). Everything in it is what the plan,
 * the evidence and the trial observations make, so replay and verify compute it again and compare.
 */
export interface GuardrailRecord {
  schema_version: 1;
  candidate_digest: string;
  incumbent_digest: string;
  /** The plan whose guardrails these are (its additions digest, which binds the trials too). */
  plan_binding_digest: string;
  /** The pairs the decision used (every recorded trial), and the digest of the metrics read for them. */
  pairs: number;
  observations_digest: string;
  /** True when every guardrail passed (only such a record is ever written). */
  passed: boolean;
  guardrails: GuardrailVerdict[];
}

/** The metrics the gate read for the pairs the decision used, in evidence order (what observations_digest covers). */
export function observedMetrics(pairs: readonly ObservedPair[]): unknown[] {
  return pairs.map((p) => ({
    pair_key: p.pair_key,
    candidate: p.observed?.candidate.metrics ?? null,
    incumbent: p.observed?.incumbent.metrics ?? null,
  }));
}

/** The gate's record for a plan's guardrails over the pairs the decision used. */
export function guardrailRecord(args: {
  candidate_digest: string;
  incumbent_digest: string;
  plan_binding_digest: string;
  guardrails: readonly string[];
  pairs: readonly ObservedPair[];
}): GuardrailRecord {
  const verdicts = evaluateGuardrails(args.guardrails, args.pairs);
  return {
    schema_version: 1,
    candidate_digest: args.candidate_digest,
    incumbent_digest: args.incumbent_digest,
    plan_binding_digest: args.plan_binding_digest,
    pairs: args.pairs.length,
    observations_digest: stableDigest(observedMetrics(args.pairs)),
    passed: verdicts.every((v) => v.verdict === 'pass'),
    guardrails: verdicts,
  };
}
