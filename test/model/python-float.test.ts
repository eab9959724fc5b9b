import {describe, expect, it} from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import {pythonFloatRepr} from '../../src/model/common/python-float.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

/** float.fromhex: [-]0x<h>.<hhh>p<exp>, exact (the mantissa has at most 53 bits). */
function fromHex(text: string): number {
  const m = /^(-?)0x([0-9a-f]+)(?:\.([0-9a-f]*))?p([+-]\d+)$/.exec(text);
  if (!m) throw new Error(`not a float.hex() text: ${text}`);
  const fraction = m[3] ?? '';
  const mantissa = Number(BigInt(`0x${m[2]}${fraction}`));
  const value = mantissa * 2 ** (Number(m[4]) - 4 * fraction.length);
  return m[1] === '-' ? -value : value;
}

// What CPython 3.11 prints for repr(x) of each value (checked with python3 here).
const CASES: Array<[number, string]> = [
  [0.05, '0.05'],
  [0.025, '0.025'],
  [1, '1.0'],
  [-2, '-2.0'],
  [0, '0.0'],
  [-0, '-0.0'],
  [0.0001, '0.0001'],
  [0.00001, '1e-05'],
  [0.00001234, '1.234e-05'],
  [1e16, '1e+16'],
  [1234567890123456.7, '1234567890123456.8'],
  [123456789012345678, '1.2345678901234568e+17'],
  [1e22, '1e+22'],
  [5e-324, '5e-324'],
  [0.1 + 0.2, '0.30000000000000004'],
  [12345.678, '12345.678'],
  [0.030396355092701332, '0.030396355092701333'],
  [1.7976931348623157e308, '1.7976931348623157e+308'],
  [Number.NaN, 'nan'],
  [Number.POSITIVE_INFINITY, 'inf'],
  [Number.NEGATIVE_INFINITY, '-inf'],
];

describe("Python's float repr", () => {
  it.each(CASES)('%p is written %s', (x, repr) => {
    expect(pythonFloatRepr(x)).toBe(repr);
  });

  it(
    'equals CPython on 400 values it printed ' +
      '(test/fixtures/python-float-repr.json, values given exactly by float.hex())',
    () => {
      const fixture = JSON.parse(
        fs.readFileSync(path.join(PROJECT_ROOT, 'test/fixtures/python-float-repr.json'), 'utf8'),
      ) as {cases: Array<[string, string]>};
      expect(fixture.cases.length).toBe(400);
      for (const [hex, repr] of fixture.cases) expect([hex, pythonFloatRepr(fromHex(hex))]).toEqual([hex, repr]);
    },
  );

  it('round-trips every value it writes', () => {
    for (let i = 0; i < 2000; i++) {
      const x = (Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 40 - 20);
      expect(Number(pythonFloatRepr(x))).toBe(x);
    }
  });
});
