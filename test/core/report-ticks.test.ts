import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {roundTicks} from '../../src/core/evaluation/report-plot.js';

// The report's y axis is labelled at round numbers whatever the data's span: a step of 1, 2 or 5 × 10^k,
// ticks at whole multiples of it covering the data, and labels with no more decimals than the step needs.
describe('the report plot’s axis ticks', () => {
  it('are whole multiples of a 1-2-5 step, cover the span in at most six steps, and print as round numbers', () => {
    fc.assert(
      fc.property(
        fc.double({min: -1e3, max: 1e3, noNaN: true}),
        fc.double({min: 1e-6, max: 2e3, noNaN: true}),
        (lo, span) => {
          const hi = lo + span;
          const {ticks, step, decimals} = roundTicks(lo, hi);
          const exponent = Math.floor(Math.log10(step) + 1e-9);
          expect([1, 2, 5]).toContain(Math.round(step / 10 ** exponent));
          // Covering the span, up to a few units in the last place of the bounds (a tick is a rounded multiple).
          const slack = (x: number) => step * 1e-9 + Math.abs(x) * 1e-12;
          expect(ticks[0]!).toBeLessThanOrEqual(lo + slack(lo));
          expect(ticks.at(-1)!).toBeGreaterThanOrEqual(hi - slack(hi));
          expect(ticks.length - 1).toBeLessThanOrEqual(6);
          for (const t of ticks) {
            expect(Math.abs(t / step - Math.round(t / step))).toBeLessThan(1e-6);
            expect(Number(t.toFixed(decimals))).toBe(t);
          }
        },
      ),
      {numRuns: 500},
    );
    // The case a run found: a bound one unit in the last place below a tick.
    const near = roundTicks(999.9999999999999, 999.9999999999999 + 0.000001);
    expect(near.ticks[0]!).toBeLessThanOrEqual(999.9999999999999 + 999.9999999999999 * 1e-12);
  });

  it('label the span the issue saw (−0.08 … 1.08) at 0.5 steps', () => {
    expect(roundTicks(-0.08, 1.08)).toEqual({ticks: [-0.5, 0, 0.5, 1, 1.5], step: 0.5, decimals: 1});
  });
});
