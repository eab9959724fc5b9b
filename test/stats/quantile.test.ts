import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {
  affineRatio,
  compareRatio,
  exactMean,
  quantileSorted as exactQuantile,
  ratioOf,
  roundRatio as round,
  summaryStatistic as exactStatistic,
  type SummaryStatistic,
} from '../../src/stats/quantile.js';

const roundRatio = (num: bigint, den: bigint) => round({num, den});
const quantileSorted = (sorted: readonly number[], pNum: number, pDen: number) =>
  round(exactQuantile(sorted, pNum, pDen));
const summaryStatistic = (stat: SummaryStatistic, values: readonly number[]) => round(exactStatistic(stat, values));

const finite = fc.double({noNaN: true, noDefaultInfinity: true});
// Metrics: integers, or doubles from 1e-300 (doubling a subnormal quantile need not double it: its rounding unit is
// fixed).
const metric = fc.oneof(fc.integer({min: 0, max: 2 ** 40}), fc.double({min: 1e-300, max: 1e12, noNaN: true}));

describe('roundRatio: a ratio of integers rounded once to the nearest double', () => {
  it('is what IEEE division gives for two doubles it can divide exactly (every double, subnormals included)', () => {
    fc.assert(
      fc.property(finite, fc.integer({min: 1, max: 1000}), (x, d) => {
        const {num, den} = ratioOf(x);
        // -0 has no sign as a ratio
        expect(Object.is(roundRatio(num, den * BigInt(d)), x / d) || (Object.is(x / d, -0) && num === 0n)).toBe(true);
      }),
      {numRuns: 3000, seed: 3601},
    );
  });

  it('rounds half-way cases to even, in the subnormal range too', () => {
    expect(roundRatio(1n, 2n ** 1075n)).toBe(0); // half the smallest subnormal
    expect(roundRatio(3n, 2n ** 1076n)).toBe(5e-324); // three quarters of it
    expect(roundRatio(3n, 2n ** 1075n)).toBe(2 * 5e-324); // 1.5 ulp: to even
    expect(roundRatio(2n ** 53n + 1n, 1n)).toBe(2 ** 53); // tie: to the even neighbour
    expect(roundRatio(2n ** 53n + 3n, 1n)).toBe(2 ** 53 + 4);
    expect(roundRatio(-7n, 2n)).toBe(-3.5);
    expect(roundRatio(0n, 5n)).toBe(0);
  });
});

describe('quantileSorted: Hyndman and Fan definition 7, exact', () => {
  it('gives the values NumPy and R give', () => {
    const range = (n: number) => Array.from({length: n}, (_, i) => i + 1);
    expect(quantileSorted([1, 2, 3, 4], 1, 2)).toBe(2.5);
    expect(quantileSorted([1, 2, 3], 1, 2)).toBe(2);
    expect(quantileSorted(range(10), 9, 10)).toBe(9.1);
    expect(quantileSorted(range(20), 19, 20)).toBe(19.05);
    expect(quantileSorted([7], 9, 10)).toBe(7);
    expect(quantileSorted([0.1, 0.2], 1, 2)).toBe(0.15000000000000002); // exact (0.1+0.2)/2, rounded once
    expect(quantileSorted([Number.MAX_VALUE, Number.MAX_VALUE], 1, 2)).toBe(Number.MAX_VALUE); // no overflow
  });

  it('equals one correctly rounded division when the interpolation numerator is an exact integer', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({min: 0, max: 2 ** 40}), {minLength: 1, maxLength: 40}),
        fc.constantFrom<[number, number]>([1, 2], [9, 10], [19, 20], [0, 1], [1, 1], [3, 7]),
        (values, [pNum, pDen]) => {
          const sorted = [...values].sort((a, b) => a - b);
          const h = (sorted.length - 1) * pNum;
          const lo = Math.floor(h / pDen);
          const r = h % pDen;
          const expected = r === 0 ? sorted[lo]! : (sorted[lo]! * (pDen - r) + sorted[lo + 1]! * r) / pDen;
          expect(quantileSorted(sorted, pNum, pDen)).toBe(expected);
        },
      ),
      {numRuns: 1500, seed: 3602},
    );
  });

  it('lies between its two neighbours, is the minimum at 0 and the maximum at 1, and grows with p', () => {
    fc.assert(
      fc.property(fc.array(finite, {minLength: 1, maxLength: 30}), (values) => {
        const sorted = [...values].sort((a, b) => a - b);
        const qs = [0, 1, 5, 9, 19, 20].map((k) => quantileSorted(sorted, k, 20));
        // (a ratio has no negative zero: -0 comes back as 0)
        expect(qs[0] === sorted[0] && qs[5] === sorted[sorted.length - 1]).toBe(true);
        for (let i = 1; i < qs.length; i++) expect(qs[i]!).toBeGreaterThanOrEqual(qs[i - 1]!);
      }),
      {numRuns: 1500, seed: 3603},
    );
  });
});

describe('summaryStatistic', () => {
  it('median, mean, p90, p95 and max of a small sample', () => {
    const xs = [5, 1, 4, 2, 3, 10, 6, 9, 8, 7];
    const stats: SummaryStatistic[] = ['median', 'mean', 'p90', 'p95', 'max'];
    expect(stats.map((s) => summaryStatistic(s, xs))).toEqual([5.5, 5.5, 9.1, 9.55, 10]);
  });

  it('does not depend on the order of the values, and doubling every value doubles it exactly', () => {
    fc.assert(
      fc.property(
        fc.array(metric, {minLength: 1, maxLength: 30}),
        fc.constantFrom('median', 'mean', 'p90', 'p95', 'max' as const),
        (values, stat) => {
          const s = summaryStatistic(stat as 'max', values);
          expect(summaryStatistic(stat as 'max', [...values].reverse())).toBe(s);
          expect(
            summaryStatistic(
              stat as 'max',
              values.map((v) => v * 2),
            ),
          ).toBe(s * 2);
        },
      ),
      {numRuns: 1500, seed: 3604},
    );
  });

  it('refuses an empty or non-finite sample', () => {
    expect(() => exactStatistic('median', [])).toThrow(RangeError);
    expect(() => exactStatistic('mean', [1, Number.NaN])).toThrow(RangeError);
  });
});

describe('exact arithmetic on ratios', () => {
  it('affineRatio and roundRatio equal IEEE arithmetic where that is exact before its one rounding', () => {
    fc.assert(
      fc.property(fc.integer({min: 0, max: 2 ** 40}), fc.integer({min: 1, max: 1000}), (x, k) => {
        expect(round(affineRatio(ratioOf(x), BigInt(k), 0n, 100n))).toBe((x * k) / 100);
        expect(round(affineRatio(ratioOf(x), 10n, BigInt(k), 10n))).toBe((x * 10 + k) / 10);
      }),
      {numRuns: 1000, seed: 3605},
    );
    expect(round(affineRatio(ratioOf(0.1), 12n, 0n, 10n))).toBe(0.12000000000000001); // 0.1 (exactly) · 1.2
  });

  it('compareRatio orders exactly, beyond what doubles tell apart', () => {
    expect(compareRatio({num: 1n, den: 3n}, {num: 2n, den: 6n})).toBe(0);
    const third = ratioOf(1 / 3);
    expect(compareRatio(third, {num: 1n, den: 3n})).toBe(-1); // 1/3 as a double is below a third
    expect(compareRatio(exactMean([1, 2, 2 ** 60]), {num: 2n ** 60n + 3n, den: 3n})).toBe(0);
    fc.assert(
      fc.property(finite, finite, (a, b) => {
        expect(compareRatio(ratioOf(a), ratioOf(b))).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
      {numRuns: 1000, seed: 3606},
    );
  });
});
