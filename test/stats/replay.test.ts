import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {
  compareReplay,
  evaluateMatchedTrials,
  matchedTrialFromDict,
  ulpDistance,
  validateBundle,
  type ComparisonResult,
} from '../../src/model/index.js';
import {SAMPLE_KNOWLEDGE} from '../helpers/paths.js';

const demo = path.join(SAMPLE_KNOWLEDGE, 'demo/context_bundles');
const read = (rel: string) => JSON.parse(fs.readFileSync(path.join(demo, rel), 'utf8'));

describe('replaying the comparisons the Python implementation recorded', () => {
  it.each([
    ['6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252'],
    ['28c6b3dd75f91e22e276a5095ab79804f165e6e38ac632c9d228a43ff4cd2ada'],
  ])('candidate %s replays bit for bit', (digest) => {
    const bundle = validateBundle(read(`bundles/${digest}.json`));
    const envelope = read(`candidates/${digest}/matched_trials.json`);
    const record = read(`candidates/${digest}/record.json`);
    const trials = envelope.trials.map((t: unknown) => matchedTrialFromDict(t));
    const replayed = evaluateMatchedTrials(bundle, trials, envelope.confirmation_policy);
    const verdict = compareReplay(record.comparison, replayed);
    expect(verdict).toMatchObject({matches: true, bit_exact: true, max_ulp: 0});
  });

  const base: ComparisonResult = {
    decision: 'confirmed',
    reason: 'r',
    screen_pairs: 1,
    confirmation_pairs: 2,
    heldout_pairs: 1,
    mean_effect: 0.3,
    confidence_low: 0.1,
    confidence_high: 0.5,
  };
  const next = (x: number, n: number) => {
    let v = x;
    for (let i = 0; i < n; i++) v = v + Math.abs(v) * Number.EPSILON * 0.6;
    return v;
  };
  it('bounds within 16 ULP match but are not bit exact, and the distance is reported', () => {
    const low = next(0.1, 8);
    const v = compareReplay(base, {...base, confidence_low: low});
    expect(v.matches).toBe(true);
    expect(v.bit_exact).toBe(false);
    expect(v.max_ulp).toBe(ulpDistance(0.1, low));
    expect(v.max_ulp).toBeGreaterThan(0);
  });
  it('a larger distance, or any change of decision, reason, counts or mean, is a mismatch', () => {
    expect(compareReplay(base, {...base, confidence_high: 0.5 + 1e-9}).matches).toBe(false);
    expect(compareReplay(base, {...base, decision: 'rejected'}).matches).toBe(false);
    expect(compareReplay(base, {...base, reason: 'other'}).matches).toBe(false);
    expect(compareReplay(base, {...base, heldout_pairs: 2}).matches).toBe(false);
    expect(compareReplay(base, {...base, mean_effect: next(0.3, 1)}).matches).toBe(false);
    expect(compareReplay(base, {...base, confidence_low: null}).matches).toBe(false);
  });
  it('ulpDistance counts representable doubles between two values, across zero too', () => {
    expect(ulpDistance(1, 1 + Number.EPSILON)).toBe(1);
    expect(ulpDistance(-0, 0)).toBe(0);
    expect(ulpDistance(-Number.MIN_VALUE, Number.MIN_VALUE)).toBe(2);
  });
});
