import {describe, expect, it} from '@jest/globals';
import {
  createMatchedTrial,
  DEFAULT_CONFIRMATION_POLICY,
  evaluateMatchedTrials,
  type ConfirmationPolicy,
  type MatchedTrial,
  type TrialLane,
} from '../../src/model/index.js';

const candidate = {digest: 'c'.repeat(64), parent_digest: 'p'.repeat(64), evaluator_epoch: 'epoch-1'};
let seed = 0;
function trial(lane: TrialLane, delta: number, extra: Partial<MatchedTrial> = {}): MatchedTrial {
  seed++;
  return createMatchedTrial({
    candidate_digest: candidate.digest,
    incumbent_digest: candidate.parent_digest,
    evaluator_epoch: 'epoch-1',
    cohort: 'cohort-a',
    fixture: `fixture-${seed}`,
    fixture_digest: `digest-${seed}`,
    seed,
    lane,
    candidate_score: 0.5 + delta,
    incumbent_score: 0.5,
    ...extra,
  });
}
const lanes = (screen: number[], conf: number[], held: number[]) => [
  ...screen.map((d) => trial('screen', d)),
  ...conf.map((d) => trial('confirmation', d)),
  ...held.map((d) => trial('heldout', d)),
];
const policy: ConfirmationPolicy = {...DEFAULT_CONFIRMATION_POLICY};
const decide = (t: MatchedTrial[], p: ConfirmationPolicy = policy) => evaluateMatchedTrials(candidate, t, p);

describe('the comparison decision', () => {
  it('2/6/2 matched pairs with a clear effect are confirmed, with the confirmation interval', () => {
    const r = decide(lanes([0.2, 0.3], [0.2, 0.25, 0.3, 0.22, 0.28, 0.26], [0.2, 0.3]));
    expect(r).toMatchObject({
      decision: 'confirmed',
      reason: 'matched confirmation and held-out lanes passed',
      screen_pairs: 2,
      confirmation_pairs: 6,
      heldout_pairs: 2,
    });
    expect(r.confidence_low!).toBeGreaterThan(0);
  });

  it.each<[string, () => MatchedTrial[], string, string]>([
    ['too few screen pairs', () => lanes([0.3], [], []), 'needs_screen', 'insufficient matched screen pairs'],
    [
      'an invalid screen pair',
      () => [trial('screen', 0.3), trial('screen', 0.3, {candidate_valid: false})],
      'rejected',
      'screen validity failure',
    ],
    [
      'a screen mean at the minimum effect (strict >)',
      () => lanes([0.0, 0.0], [], []),
      'rejected',
      'candidate failed the cheap matched screen',
    ],
    [
      'a passed screen',
      () => lanes([0.3, 0.3], [0.2], []),
      'needs_confirmation',
      'screen passed; more matched confirmation pairs required',
    ],
    [
      'an invalid confirmation pair',
      () => [...lanes([0.3, 0.3], [0.2, 0.2, 0.2, 0.2, 0.2], []), trial('confirmation', 0.2, {incumbent_valid: false})],
      'rejected',
      'confirmation validity failure',
    ],
    [
      'an interval below the minimum',
      () => lanes([0.3, 0.3], [-0.3, -0.31, -0.29, -0.3, -0.32, -0.28], []),
      'rejected',
      'confirmation confidence interval is below the minimum effect',
    ],
    [
      'an interval over the minimum, budget left',
      () => lanes([0.3, 0.3], [0.3, -0.3, 0.3, -0.2, 0.1, -0.1], []),
      'needs_confirmation',
      'confirmation uncertainty overlaps the minimum effect',
    ],
    [
      'a passed confirmation',
      () => lanes([0.3, 0.3], [0.2, 0.25, 0.3, 0.22, 0.28, 0.26], [0.2]),
      'needs_heldout',
      'confirmation passed; held-out matched pairs required',
    ],
    [
      'an invalid held-out pair',
      () => [
        ...lanes([0.3, 0.3], [0.2, 0.25, 0.3, 0.22, 0.28, 0.26], [0.2]),
        trial('heldout', 0.2, {candidate_valid: false}),
      ],
      'rejected',
      'held-out validity failure',
    ],
    [
      'a held-out regression',
      () => lanes([0.3, 0.3], [0.2, 0.25, 0.3, 0.22, 0.28, 0.26], [0.0, -0.1]),
      'rejected',
      'candidate regressed on the held-out lane',
    ],
  ])('%s', (_name, make, decision, reason) => {
    expect(decide(make())).toMatchObject({decision, reason});
  });

  it('an exhausted budget without a decisive effect is inconclusive', () => {
    const p = {...policy, min_confirmation_pairs: 4, max_confirmation_pairs: 4};
    const r = decide(lanes([0.3, 0.3], [0.014, 0.014, 0.034, 0.034], []), {...p, min_effect: 0.01});
    expect(r).toMatchObject({
      decision: 'inconclusive',
      reason: 'maximum confirmation budget reached without a decisive effect',
    });
  });

  it('the held-out regression reports the held-out mean, with confirmation bounds', () => {
    const r = decide(lanes([0.3, 0.3], [0.2, 0.25, 0.3, 0.22, 0.28, 0.26], [0.0, -0.1]));
    expect(r.mean_effect).toBeCloseTo(-0.05, 12);
    expect(r.confidence_low).not.toBeNull();
  });

  it('refuses a duplicate pair, also when only the lane or the display name differs', () => {
    const a = trial('confirmation', 0.2);
    const relabeled = createMatchedTrial({...a, lane: 'heldout', fixture: 'another name'});
    expect(relabeled.pair_key).toBe(a.pair_key);
    expect(() => decide([...lanes([0.3, 0.3], [], []), a, relabeled])).toThrow('duplicate matched trial pair');
  });

  it('refuses more confirmation pairs than the maximum, and lineage drift', () => {
    expect(() => decide(lanes([0.3, 0.3], Array(21).fill(0.1), []))).toThrow(
      'confirmation pairs exceed the configured maximum',
    );
    expect(() => decide([trial('screen', 0.1, {candidate_digest: 'd'.repeat(64)})])).toThrow('candidate digest');
    expect(() => decide([trial('screen', 0.1, {incumbent_digest: 'd'.repeat(64)})])).toThrow('candidate parent');
    expect(() => decide([trial('screen', 0.1, {evaluator_epoch: 'other'})])).toThrow('evaluator epoch');
    expect(() => decide([trial('screen', 0.1, {cohort: ' '})])).toThrow('cohort, fixture, and fixture_digest');
  });

  it('refuses non-finite scores and deltas that overflow', () => {
    expect(() => decide([trial('screen', 0.1, {candidate_score: Number.NaN})])).toThrow(/finite/);
    expect(() => decide([trial('screen', 0.1, {candidate_score: Number.POSITIVE_INFINITY})])).toThrow(/finite/);
    expect(() =>
      decide([trial('screen', 0.1, {candidate_score: Number.MAX_VALUE, incumbent_score: -Number.MAX_VALUE})]),
    ).toThrow(/finite/);
  });

  it('refuses invalid policies', () => {
    for (const change of [
      {min_screen_pairs: 0},
      {min_confirmation_pairs: 1},
      {max_confirmation_pairs: 3},
      {min_heldout_pairs: 0},
      {confidence_z: -1},
      {min_effect: Number.POSITIVE_INFINITY},
    ]) {
      expect(() => decide([], {...policy, ...change})).toThrow();
    }
  });
});
