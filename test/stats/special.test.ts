import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {exp} from '../../src/stats/special/exp.js';
import {log} from '../../src/stats/special/log.js';
import {log1p} from '../../src/stats/special/log1p.js';
import {erfc} from '../../src/stats/special/erfc.js';
import {lgamma} from '../../src/stats/special/lgamma.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);
const fromBits = (hex: string) => {
  u64[0] = BigInt(`0x${hex}`);
  return f64[0]!;
};
const toBits = (x: number) => {
  f64[0] = x;
  return u64[0]!.toString(16).padStart(16, '0');
};

// Outputs of Python 3.11's math module on glibc 2.36 without FMA (scripts/gen-special-fixtures.py).
const fixture = JSON.parse(
  fs.readFileSync(path.join(PROJECT_ROOT, 'test/fixtures/python-special-functions.json'), 'utf8'),
);
const fns: Record<string, (x: number) => number> = {exp, log, log1p, erfc, lgamma};

describe('special functions equal Python (glibc 2.36 libm, CPython lgamma) bit for bit', () => {
  it.each(Object.keys(fns))('%s', (name) => {
    const cases: Array<[string, string]> = fixture.functions[name];
    expect(cases.length).toBeGreaterThan(1000);
    const mismatches = cases
      .filter(([x, y]) => toBits(fns[name]!(fromBits(x))) !== y)
      .map(([x, y]) => [fromBits(x), fromBits(y)]);
    expect(mismatches).toEqual([]);
  });

  it('special values', () => {
    expect(exp(0)).toBe(1);
    expect(exp(-Infinity)).toBe(0);
    expect(exp(Infinity)).toBe(Infinity);
    expect(exp(710)).toBe(Infinity);
    expect(exp(-746)).toBe(0);
    expect(Number.isNaN(exp(NaN))).toBe(true);
    expect(log(1)).toBe(0);
    expect(log(0)).toBe(-Infinity);
    expect(Number.isNaN(log(-1))).toBe(true);
    expect(log(Infinity)).toBe(Infinity);
    expect(log(5e-324)).toBe(-744.4400719213812);
    expect(log1p(-1)).toBe(-Infinity);
    expect(log1p(0)).toBe(0);
    expect(erfc(0)).toBe(1);
    expect(erfc(Infinity)).toBe(0);
    expect(erfc(-Infinity)).toBe(2);
    expect(erfc(30)).toBe(0);
    expect(lgamma(1)).toBe(0);
    expect(lgamma(2)).toBe(0);
    expect(() => lgamma(-1)).toThrow(RangeError);
  });

  it('never calls Math.exp, Math.log or friends', () => {
    const dir = path.join(PROJECT_ROOT, 'src/stats');
    const files = fs
      .readdirSync(dir, {recursive: true})
      .map(String)
      .filter((f) => f.endsWith('.ts'));
    for (const f of files) {
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      expect([f, text.match(/Math\.(exp|log|log1p|log2|log10|expm1|pow|sin|cos|tan|atan|cbrt|hypot)\b/g)]).toEqual([
        f,
        null,
      ]);
    }
  });
});
