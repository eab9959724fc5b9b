import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {pairedConfidenceInterval} from '../../src/stats/interval.js';
import {requiredConfidenceZ} from '../../src/stats/required-z.js';
import {fmean, fsum} from '../../src/stats/exact-sum.js';
import {sampleStdev, sqrtOfRatio} from '../../src/stats/exact-moments.js';
import {studentTUpperQuantile, studentTSurvival} from '../../src/stats/student-t.js';
import {powInt} from '../../src/stats/pow-int.js';
import {FIXTURES} from '../helpers/paths.js';

const cases = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'python-stats-cases.json'), 'utf8'));

describe('python-stats-cases.json: the Python reference, bit for bit', () => {
  it('all 200 interval cases: mean, low and high', () => {
    expect(cases.ci_cases).toHaveLength(200);
    const wrong = cases.ci_cases.filter(
      (c: {
        effects: number[];
        confidence_z: number;
        looks: number;
        mean: number;
        low: number | null;
        high: number | null;
      }) => {
        const r = pairedConfidenceInterval(c.effects, c.confidence_z, c.looks);
        return !(Object.is(r.mean, c.mean) && Object.is(r.low, c.low) && Object.is(r.high, c.high));
      },
    );
    expect(wrong).toEqual([]);
  });

  it('all 140 required z values', () => {
    expect(cases.required_z_cases).toHaveLength(140);
    const wrong = cases.required_z_cases.filter(
      (c: {alpha: number; required_confidence_z: number}) => requiredConfidenceZ(c.alpha) !== c.required_confidence_z,
    );
    expect(wrong).toEqual([]);
  });
});

describe('the reference anchors (§4.2)', () => {
  // Taken from the upstream TypeScript tests, whose naive sum gives the mean
  // 0.02400000000000002 where the exactly rounded mean (Python's, ours) is 0.024;
  // the bounds therefore agree within the cross-runtime replay tolerance.
  const deltas = [0.014, 0.014, 0.034, 0.034];
  const close = (a: number, b: number, halfWidth: number) =>
    expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-12 * halfWidth);
  it('L = 1', () => {
    const r = pairedConfidenceInterval(deltas, 1.96, 1);
    expect(r.mean).toBe(0.024);
    close(r.low!, 0.005625504524827234, r.high! - r.mean);
    close(r.high!, 0.04237449547517281, r.high! - r.mean);
  });
  it('L = 9', () => {
    const r = pairedConfidenceInterval(deltas, 1.96, 9);
    close(r.low!, -0.017483077826851476, r.high! - r.mean);
    close(r.high!, 0.06548307782685152, r.high! - r.mean);
  });
  it('z = 8 with 15 looks gives finite bounds; z = 40 gives ±MAX_VALUE', () => {
    const r = pairedConfidenceInterval(deltas, 8, 15);
    expect(Number.isFinite(r.low!) && Number.isFinite(r.high!)).toBe(true);
    expect(pairedConfidenceInterval(deltas, 40, 1)).toEqual({
      mean: 0.024,
      low: -Number.MAX_VALUE,
      high: Number.MAX_VALUE,
    });
  });
  it('edge cases: one effect has no bounds, zero spread collapses, bad arguments throw', () => {
    expect(pairedConfidenceInterval([0.3], 1.96, 1)).toEqual({mean: 0.3, low: null, high: null});
    // fmean([0.2, 0.2, 0.2]) is 0.20000000000000004 in Python too.
    expect(pairedConfidenceInterval([0.2, 0.2, 0.2], 1.96, 3)).toEqual({
      mean: 0.20000000000000004,
      low: 0.20000000000000004,
      high: 0.20000000000000004,
    });
    expect(() => pairedConfidenceInterval([], 1.96, 1)).toThrow(RangeError);
    expect(() => pairedConfidenceInterval([1, 2], 0, 1)).toThrow(/confidence_z/);
    expect(() => pairedConfidenceInterval([1, 2], 1.96, 0)).toThrow(/max_looks/);
    expect(() => pairedConfidenceInterval([1, NaN], 1.96, 1)).toThrow(/finite/);
  });
});

describe('exact arithmetic', () => {
  // Expected values computed with Python 3.11 (math.fsum, statistics.fmean and statistics.stdev).
  it('fsum is exactly rounded where a naive sum is not', () => {
    expect(fsum([1e100, 1, -1e100, 1e-100])).toBe(1);
    expect(fsum([0.1, 0.2, 0.3, -0.6])).toBe(2.7755575615628914e-17);
    expect(0.1 + 0.2 + 0.3 - 0.6).not.toBe(2.7755575615628914e-17);
    expect(fsum([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])).toBe(1);
    expect(fmean([0.014, 0.014, 0.034, 0.034])).toBe(0.024);
    expect(fsum([])).toBe(0);
  });
  it('stdev is the correctly rounded root of the exact variance', () => {
    expect(sampleStdev([1, 2, 3, 4])).toBe(1.2909944487358056);
    expect(sampleStdev([1e9 + 0.1, 1e9 + 0.2, 1e9 + 0.3])).toBe(0.09999996423721906);
    expect(sampleStdev([2, 2])).toBe(0);
    expect(sqrtOfRatio(2n, 1n)).toBe(Math.SQRT2);
    expect(sqrtOfRatio(1n, 4n)).toBe(0.5);
  });
  it('powInt is exact for powers of two and deterministic', () => {
    expect(powInt(0.5, 47)).toBe(2 ** -47);
    expect(powInt(0.5, 1074)).toBe(5e-324);
    expect(powInt(0.5, 1075)).toBe(0);
    expect(powInt(2, 1024)).toBe(Infinity);
    expect(powInt(3, 3)).toBe(27);
  });
  it('the Student-t quantile inverts the survival function', () => {
    const q = studentTUpperQuantile(0.025, 10);
    // The reference's own algorithm (continued fraction to 3e-14, 80 bisections) gives
    // 2.228138851986274, within 2.2e-11 of the exact quantile 2.2281388519649385.
    expect(q).toBe(2.228138851986274);
    expect(Math.abs(q - 2.2281388519649385)).toBeLessThan(3e-11);
    expect(studentTSurvival(q, 10)).toBeCloseTo(0.025, 14);
    expect(studentTUpperQuantile(0, 3)).toBe(Infinity);
    expect(() => studentTUpperQuantile(0.5, 3)).toThrow(RangeError);
  });
});
