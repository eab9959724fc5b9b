import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {canonicalJson, jsonEqual} from '../../src/canonical/index.js';
import {jsonValues} from '../helpers/arbitraries.js';

// jsonEqual answers equal values without writing them: it must say exactly what comparing their canonical JSON
// says, and fail where canonicalJson fails.
const byCanonical = (a: unknown, b: unknown): boolean | string => {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch (error) {
    return (error as {code?: string}).code ?? String(error);
  }
};
const byJsonEqual = (a: unknown, b: unknown): boolean | string => {
  try {
    return jsonEqual(a, b);
  } catch (error) {
    return (error as {code?: string}).code ?? String(error);
  }
};
/** The same value with every object's keys in reverse order. */
const reversed = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(reversed)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v)
            .reverse()
            .map(([k, x]) => [k, reversed(x)]),
        )
      : v;

// Keys V8 orders numerically, __proto__, and strings canonical JSON refuses (lone surrogates) among the rest.
const text = fc.oneof(fc.string(), fc.string({unit: 'binary'}), fc.constantFrom('0', '10', '__proto__', 'a', '\ud800'));
const json = jsonValues({text, canonical: false});

describe('jsonEqual', () => {
  it('agrees with comparing canonical JSON, on equal values, reordered ones and different ones', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        for (const [x, y] of [
          [a, a],
          [a, structuredClone(a)],
          [a, reversed(a)],
          [a, b],
        ])
          expect(byJsonEqual(x, y)).toBe(byCanonical(x, y));
      }),
      {numRuns: 300},
    );
  });

  it('fails where canonical JSON does, also on two equal values', () => {
    const deep = (n: number): unknown => (n === 0 ? 1 : [deep(n - 1)]);
    for (const bad of [{a: '\ud800'}, {a: Number.NaN}, {a: 2 ** 60}, {a: undefined}, [1n], new Date(0), deep(300)])
      expect(byJsonEqual(bad, bad)).toBe(byCanonical(bad, bad));
    expect(byJsonEqual(-0, 0)).toBe(true);
    expect(byJsonEqual({a: 1, b: [1, {c: null}]}, {b: [1, {c: null}], a: 1})).toBe(true);
    expect(byJsonEqual({a: 1}, {a: 1, b: 2})).toBe(false);
    expect(byJsonEqual([1, 2], {0: 1, 1: 2})).toBe(false);
  });
});
