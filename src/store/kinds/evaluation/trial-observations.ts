import {jsonEqual, stableDigest} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {armObservationOf, pairObserved, type PairObservation} from '../../../model/evaluation/observations.js';
import {readDocument} from '../../documents.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';
import type {CandidateCheck} from '../common/kind-steps.js';

/**
 * candidates/<digest>/trial_observations.json (an autoctx addition the
 * Python implementation never reads): for each recorded pair, what the
 * evaluator observed of each arm beside its score (metrics, the checker's
 * verdict, artifact digests). Written with the trials it describes, in the
 * same fold of the run's journal, and only when some pair observed
 * something. Descriptive: no decision, seal or replay reads it, and a tree
 * without it (or without the artifact files it names) verifies and replays.
 */
export const OBSERVATIONS_SCHEMA = 'trial-observations' as const;

/** Pair key to both arms' observations. */
export type TrialObservations = ReadonlyMap<string, PairObservation>;

function pairOf(raw: unknown): PairObservation {
  const p = raw as {candidate: Record<string, unknown>; incumbent: Record<string, unknown>};
  return {candidate: armObservationOf(p.candidate), incumbent: armObservationOf(p.incumbent)};
}

/**
 * The candidate's observations by pair key, or null when it has none. The
 * schema checks every value (metric names and ranges, artifact names and
 * digests); the file must be this candidate's.
 */
export function readTrialObservations(ctx: KindContext, digest: string): TrialObservations | null {
  return readDocument(ctx.guard, ctx.paths.trialObservations(digest), OBSERVATIONS_SCHEMA, (value) => {
    const doc = value as unknown as {candidate_digest: string; pairs: Record<string, unknown>; pairs_digest: string};
    if (doc.candidate_digest !== digest)
      fail('INVALID_INPUT', `the trial observations are for candidate ${doc.candidate_digest}`);
    if (stableDigest(doc.pairs) !== doc.pairs_digest)
      fail('DIGEST_MISMATCH', 'pairs_digest does not match the observations it covers');
    return new Map(Object.keys(doc.pairs).map((key) => [key, pairOf(doc.pairs[key])]));
  });
}

/** The document for the given pairs (those that observed something), keys sorted. */
function documentOf(digest: string, pairs: TrialObservations): Record<string, unknown> {
  const kept: Record<string, PairObservation> = {};
  for (const key of [...pairs.keys()].sort()) {
    const p = pairs.get(key)!;
    if (pairObserved(p)) kept[key] = p;
  }
  return {
    schema_version: 1,
    candidate_digest: digest,
    pairs: kept,
    pairs_digest: stableDigest(kept),
  };
}

/**
 * Make the stored observations those of `pairs` (under the scenario lock, in
 * the fold that records the pairs): written when they differ from what is
 * stored, and never written when no pair observed anything and there is no
 * file. Returns whether it wrote.
 */
export function writeTrialObservations(ctx: KindContext, digest: string, pairs: TrialObservations): boolean {
  const doc = documentOf(digest, pairs);
  const file = ctx.paths.trialObservations(digest);
  const stored = readDocument(ctx.guard, file, OBSERVATIONS_SCHEMA);
  if (stored === null && Object.keys(doc.pairs as object).length === 0) return false;
  if (stored !== null && jsonEqual(stored, doc)) return false;
  ctx.writer.replaceDocument(file, OBSERVATIONS_SCHEMA, doc);
  return true;
}

declare module '../common/kind-steps.js' {
  interface CandidateFacts {
    observations: TrialObservations | null | undefined;
  }
}

/**
 * verify: the file is schema-valid and this candidate's, and every pair it
 * observes is a pair the candidate's evidence records (read as the evidence
 * check found it; nothing to compare when that check refused the evidence).
 */
export function verifyTrialObservations(
  c: Findings,
  digest: string,
  recorded: ReadonlySet<string> | null | undefined,
): TrialObservations | null | undefined {
  const file = c.store.paths.trialObservations(digest);
  const observations = c.attempt(file, () => readTrialObservations(c.store, digest));
  if (!observations || recorded === undefined) return observations;
  const evidence = c.store.paths.matchedTrials(digest);
  const strays = [...observations.keys()].filter((key) => !recorded?.has(key));
  for (const key of strays.slice(0, 5))
    c.both(
      file,
      evidence,
      'MISSING_EVIDENCE',
      `${c.rel(file)} observes pair ${key}, which ${c.rel(evidence)} does not record`,
    );
  if (strays.length > 5)
    c.both(
      file,
      evidence,
      'MISSING_EVIDENCE',
      `${c.rel(file)} observes ${strays.length - 5} more pairs ${c.rel(evidence)} does not record`,
    );
  return observations;
}

export const observationsCheck: CandidateCheck = {
  order: 550,
  candidate(c, digest, facts) {
    const evidence = facts.evidence;
    facts.observations = verifyTrialObservations(
      c,
      digest,
      evidence === undefined ? undefined : evidence === null ? null : evidence.pairKeys,
    );
  },
};
