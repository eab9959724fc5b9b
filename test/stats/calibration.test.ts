import {describe, expect, it} from '@jest/globals';
import {calibrate, CALIBRATION_CASES, simulateCase, type CalibrationRow} from '../../src/core/evaluation/calibrate.js';

// The reference's acceptance thresholds, at 1,000 campaigns per row (about 5 s here).
const ALPHA = 0.05;
let rows: CalibrationRow[];
const row = (name: string, method: string) => {
  const r = rows.find((x) => x.case === name && x.method === method);
  if (!r) throw new Error(`no row ${name} / ${method}`);
  return r;
};

describe('false-promotion calibration, 1,000 campaigns per row', () => {
  it('runs every case', () => {
    rows = calibrate({campaigns: 1000, seed: 986}).rows;
    expect(rows.map((r) => r.case)).toEqual(CALIBRATION_CASES.map((c) => c.case));
  });

  it('null rows hold the promotion rate at or below alpha, with every method', () => {
    for (const r of rows.filter((x) => x.case.startsWith('null') && x.method !== 'naive_pairs'))
      expect([r.case, r.method, r.promotion_rate <= ALPHA]).toEqual([r.case, r.method, true]);
  });

  it(
    'power: clear win >= 0.9, heteroskedastic win >= 0.8, ' + 'heavy-tail win >= 0.8 (both methods), near tie < 0.2',
    () => {
      expect(row('clear win', 'cluster_t').promotion_rate).toBeGreaterThanOrEqual(0.9);
      expect(row('heteroskedastic win', 'cluster_t').promotion_rate).toBeGreaterThanOrEqual(0.8);
      expect(row('bounded heavy-tail win', 'bounded_hoeffding').promotion_rate).toBeGreaterThanOrEqual(0.8);
      expect(row('bounded heavy-tail win', 'bounded_betting').promotion_rate).toBeGreaterThanOrEqual(0.8);
      expect(row('near tie', 'cluster_t').promotion_rate).toBeLessThan(0.2);
    },
  );

  it(
    'a clear win needs fewer candidates than a near tie; the ' + 'heavy-tail win fewer blocks than the heavy-tail null',
    () => {
      expect(row('clear win', 'cluster_t').avg_candidates).toBeLessThan(row('near tie', 'cluster_t').avg_candidates);
      expect(row('bounded heavy-tail win', 'bounded_hoeffding').avg_confirmation_blocks).toBeLessThan(
        row('null bounded heavy tail', 'bounded_hoeffding').avg_confirmation_blocks,
      );
    },
  );

  it('the betting method needs clearly fewer confirmation blocks than Hoeffding on both heavy-tail rows', () => {
    for (const name of ['null bounded heavy tail', 'bounded heavy-tail win']) {
      expect(row(name, 'bounded_betting').avg_confirmation_blocks).toBeLessThan(
        0.5 * row(name, 'bounded_hoeffding').avg_confirmation_blocks,
      );
    }
  });

  it('with seeds that share a fixture effect, blocking holds alpha where a naive per-pair analysis does not', () => {
    const blocked = rows.find((r) => r.case.startsWith('null clustered seeds') && r.method === 'cluster_t')!;
    const naive = rows.find((r) => r.case.includes('naive'))!;
    expect(blocked.promotion_rate).toBeLessThanOrEqual(ALPHA);
    expect(naive.promotion_rate).toBeGreaterThan(blocked.promotion_rate);
    expect(naive.promotion_rate).toBeGreaterThan(ALPHA);
  });

  it('the same seed gives the same table; another seed another', () => {
    const c = CALIBRATION_CASES[0]!;
    const a = simulateCase(c, {campaigns: 200, seed: 1});
    const b = simulateCase(c, {campaigns: 200, seed: 1});
    expect({...a, seconds: 0}).toEqual({...b, seconds: 0});
    expect(simulateCase(c, {campaigns: 200, seed: 2}).avg_confirmation_blocks).not.toBe(a.avg_confirmation_blocks);
  });
});
