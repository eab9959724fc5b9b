import {stableDigest} from '../canonical/index.js';

export const TRIAL_LANES = ['screen', 'confirmation', 'heldout'] as const;
export type TrialLane = (typeof TRIAL_LANES)[number];

/** Identity of a matched pair: lane and display name are deliberately left out. */
export function matchedTrialPairKey(t: {evaluator_epoch: string; cohort: string; fixture_digest: string; seed: number}): string {
  return stableDigest({cohort: t.cohort, evaluator_epoch: t.evaluator_epoch, fixture_digest: t.fixture_digest, seed: t.seed});
}

/** The pair key schema-1 rows used, which included lane and display name. */
export function legacyPairKey(t: {evaluator_epoch: string; cohort: string; fixture: string; fixture_digest: string; seed: number; lane: string}): string {
  return stableDigest({cohort: t.cohort, evaluator_epoch: t.evaluator_epoch, fixture: t.fixture, fixture_digest: t.fixture_digest, lane: t.lane, seed: t.seed});
}
