import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {
  evaluateGuardrails,
  guardrailLimit,
  guardrailSet,
  parseGuardrail,
  verdictLine,
  type ObservedPair,
} from '../../src/model/promotion/guardrails.js';
import {isAutoctxError} from '../../src/errors.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

const stat = fc.constantFrom('median', 'mean', 'p90', 'p95', 'max');
const metricName = fc.constantFrom('latency_ms', 'input_tokens', 'output_tokens', 'cost_usd');
const decimal = fc
  .tuple(fc.integer({min: 0, max: 99999}), fc.option(fc.integer({min: 0, max: 9999}), {nil: undefined}))
  .map(([w, f]) => (f === undefined ? `${w}` : `${w}.${f}`));
const bound = fc.oneof(
  decimal.filter((d) => Number(d) > 0).map((d) => `${d}x`),
  decimal.map((d) => `+${d}%`),
  decimal.map((d) => `+${d}`),
  decimal.map((d) => `-${d}`),
);
const space = fc.constantFrom('', ' ', '  ');
const expression = fc
  .tuple(stat, metricName, bound, space, space, space)
  .map(([s, m, b, a, c, d]) => `${a}${s}(${m})${c}<=${d}${b}`);

function refusal(text: string): string {
  try {
    parseGuardrail(text);
  } catch (error) {
    if (isAutoctxError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error(`${text} was accepted`);
}

const pairs = (candidate: number[], incumbent: number[], metric = 'cost_usd'): ObservedPair[] =>
  candidate.map((c, i) => ({
    pair_key: `k${i}`,
    observed: {candidate: {metrics: {[metric]: c}}, incumbent: {metrics: {[metric]: incumbent[i]!}}},
  }));

describe('guardrail expressions', () => {
  it('parse the three bound forms into one canonical spelling', () => {
    expect(parseGuardrail('median(cost_usd) <= 1.2x').text).toBe('median(cost_usd) <= 1.2x');
    expect(parseGuardrail(' p90( latency_ms )<=+10.0% ').text).toBe('p90(latency_ms) <= +10%');
    expect(parseGuardrail('mean(output_tokens) <= +0500').text).toBe('mean(output_tokens) <= +500');
    expect(parseGuardrail('max(input_tokens) <= 01.50x').text).toBe('max(input_tokens) <= 1.5x');
    expect(parseGuardrail('p95(latency_ms) <= -0.5%').text).toBe('p95(latency_ms) <= -0.5%');
    expect(parseGuardrail('p95(latency_ms) <= -0').text).toBe('p95(latency_ms) <= +0');
    expect(parseGuardrail('mean(cost_usd) <= 0.05x').bound).toEqual({
      kind: 'ratio',
      negative: false,
      digits: 5n,
      decimals: 2,
    });
  });

  it('refuse anything else with one line that gives the grammar', () => {
    const cases: Array<[string, string]> = [
      ['median(cost) <= 1.2x', 'unknown metric "cost"'],
      ['p99(cost_usd) <= 1.2x', 'unknown statistic "p99"'],
      ['median(cost_usd) < 1.2x', 'not a guardrail expression'],
      ['median(cost_usd) <= 1e3', 'not a guardrail expression'],
      ['median(cost_usd) <= +1.2x', 'a ratio bound has no sign (write 1.2x)'],
      ['median(cost_usd) <= 0x', 'a ratio bound must be above 0'],
      ['median(cost_usd) <= 10%', 'a share needs its sign (write +10%)'],
      ['median(cost_usd) <= 500', 'a difference needs its sign (write +500)'],
      ['median(cost_usd) <= -100%', 'a share below the incumbent must be above -100%'],
      ['median(cost_usd) <= 1234567890123456x', 'a bound has at most 15 digits'],
      ['', 'not a guardrail expression'],
    ];
    for (const [text, why] of cases) {
      const line = refusal(text);
      expect(line).toContain(`INVALID_INPUT: --guardrail ${JSON.stringify(text)}: ${why}`);
      expect(line).toContain('expected <stat>(<metric>) <= <bound>');
      expect(line).not.toContain('\n');
    }
  });

  it('property: every well-formed expression parses, and its canonical spelling parses to itself', () => {
    fc.assert(
      fc.property(expression, (text) => {
        const g = parseGuardrail(text);
        expect(parseGuardrail(g.text)).toEqual(g);
        expect(parseGuardrail(text.replace(/\s+/g, '')).text).toBe(g.text);
        expect(g.text).toMatch(/^[a-z0-9]+\([a-z_]+\) <= [+-]?(0|[1-9]\d*)(\.\d*[1-9])?[x%]?$/);
      }),
      {numRuns: 500, seed: 3611},
    );
  });

  it('a set is canonical, without repeats, and does not depend on the order given', () => {
    expect(guardrailSet(['p90(latency_ms) <= +10%', 'median(cost_usd)<=1.20x', 'p90(latency_ms)<=+10%'])).toEqual([
      'median(cost_usd) <= 1.2x',
      'p90(latency_ms) <= +10%',
    ]);
    fc.assert(
      fc.property(fc.array(expression, {maxLength: 6}), (texts) => {
        expect(guardrailSet([...texts].reverse())).toEqual(guardrailSet(texts));
        expect(guardrailSet(guardrailSet(texts))).toEqual(guardrailSet(texts));
      }),
      {numRuns: 300, seed: 3612},
    );
  });
});

describe('guardrail limits', () => {
  it('are the exact bound rounded once', () => {
    expect(guardrailLimit(parseGuardrail('median(cost_usd) <= 1.2x'), 1)).toBe(1.2);
    expect(guardrailLimit(parseGuardrail('median(cost_usd) <= 1.2x'), 0.1)).toBe(0.12000000000000001);
    expect(guardrailLimit(parseGuardrail('p90(latency_ms) <= +10%'), 1200)).toBe(1320);
    expect(guardrailLimit(parseGuardrail('p90(latency_ms) <= -10%'), 1200)).toBe(1080);
    expect(guardrailLimit(parseGuardrail('mean(output_tokens) <= +500'), 1200)).toBe(1700);
    expect(guardrailLimit(parseGuardrail('mean(output_tokens) <= -0.25'), 1)).toBe(0.75);
    expect(guardrailLimit(parseGuardrail('max(cost_usd) <= 99999x'), Number.MAX_VALUE)).toBe(Number.MAX_VALUE);
  });

  it('property: a share is the same as the ratio it names, and a limit grows with the incumbent', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 0, max: 500}),
        fc.double({min: 0, max: 1e15, noNaN: true}),
        fc.double({min: 0, max: 1e15, noNaN: true}),
        (pct, a, b) => {
          const share = parseGuardrail(`mean(cost_usd) <= +${pct}%`);
          const whole = 100 + pct;
          const ratio = parseGuardrail(
            `mean(cost_usd) <= ${Math.floor(whole / 100)}.${String(whole % 100).padStart(2, '0')}x`,
          );
          expect(guardrailLimit(share, a)).toBe(guardrailLimit(ratio, a));
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(guardrailLimit(share, lo)).toBeLessThanOrEqual(guardrailLimit(share, hi));
        },
      ),
      {numRuns: 1000, seed: 3613},
    );
  });
});

describe('guardrail verdicts', () => {
  it('pass, fail and unmeasured', () => {
    const [v] = evaluateGuardrails(['median(cost_usd) <= 1.2x'], pairs([1.1, 1.2, 1.3], [1, 1, 1]));
    expect(v).toEqual({
      guardrail: 'median(cost_usd) <= 1.2x',
      verdict: 'pass',
      pairs: 3,
      missing_pairs: 0,
      candidate: 1.2,
      incumbent: 1,
      limit: 1.2,
    });
    expect(verdictLine(v!)).toBe('median(cost_usd) <= 1.2x: pass (candidate 1.2, limit 1.2, incumbent 1)');
    const [f] = evaluateGuardrails(['max(cost_usd) <= 1.2x'], pairs([1.1, 1.2, 1.3], [1, 1, 1]));
    expect([f!.verdict, f!.candidate, f!.limit]).toEqual(['fail', 1.3, 1.2]);
    const holes: ObservedPair[] = [...pairs([1], [1]), {pair_key: 'k9', observed: null}];
    const [u] = evaluateGuardrails(['max(cost_usd) <= 1.2x'], holes);
    expect(u).toEqual({
      guardrail: 'max(cost_usd) <= 1.2x',
      verdict: 'unmeasured',
      pairs: 2,
      missing_pairs: 1,
      candidate: null,
      incumbent: null,
      limit: null,
    });
    expect(verdictLine(u!)).toBe('max(cost_usd) <= 1.2x: unmeasured (1 of 2 pairs without the metric for both arms)');
    expect(evaluateGuardrails(['max(cost_usd) <= 1.2x'], [])[0]!.verdict).toBe('unmeasured');
    // Another metric recorded is not this one.
    expect(evaluateGuardrails(['max(cost_usd) <= 1.2x'], pairs([1], [1], 'latency_ms'))[0]!.verdict).toBe('unmeasured');
  });

  it('property: the verdict agrees with the recorded values, and equal arms pass', () => {
    const values = fc.array(fc.integer({min: 0, max: 10 ** 9}), {minLength: 1, maxLength: 25});
    fc.assert(
      fc.property(values, values, expression, (c, i, text) => {
        const n = Math.min(c.length, i.length);
        const g = parseGuardrail(text);
        const [v] = evaluateGuardrails([text], pairs(c.slice(0, n), i.slice(0, n), g.metric));
        // The verdict compares exact values; rounding each once keeps their order.
        if (v!.verdict === 'pass') expect(v!.candidate!).toBeLessThanOrEqual(v!.limit!);
        else expect(v!.candidate!).toBeGreaterThanOrEqual(v!.limit!);
        if (g.stat === 'max' && g.bound.kind !== 'absolute') expect(v!.limit).toBe(guardrailLimit(g, v!.incumbent!));
        const same = evaluateGuardrails(
          [`${g.stat}(${g.metric}) <= 1x`, `${g.stat}(${g.metric}) <= +0%`, `${g.stat}(${g.metric}) <= +0`],
          pairs(i, i, g.metric),
        );
        expect(same.map((s) => s.verdict)).toEqual(['pass', 'pass', 'pass']);
      }),
      {numRuns: 800, seed: 3614},
    );
  });

  it('property: a candidate at exactly k times the incumbent passes k·x and fails anything below', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({min: 1, max: 10 ** 6}), {minLength: 1, maxLength: 25}),
        fc.integer({min: 1, max: 8}),
        stat,
        (i, k, s) => {
          const c = i.map((x) => x * k);
          const [at, below] = evaluateGuardrails(
            [`${s}(latency_ms) <= ${k}x`, `${s}(latency_ms) <= ${k - 0.01}x`],
            pairs(c, i, 'latency_ms'),
          );
          expect(at!.verdict).toBe('pass');
          expect(below!.verdict).toBe('fail');
        },
      ),
      {numRuns: 500, seed: 3615},
    );
  });
});

describe('the guardrail module', () => {
  it('computes with exact arithmetic only: no Math function that rounds differently across engines', () => {
    const text = fs.readFileSync(path.join(PROJECT_ROOT, 'src/model/promotion/guardrails.ts'), 'utf8');
    expect(text.match(/Math\.(?!min\b|max\b)\w+/g)).toBeNull();
  });
});
