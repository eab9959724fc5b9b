import {jsonEqual} from '../../canonical/index.js';
import {AutoctxError, fail} from '../../errors.js';
import type {ContextBundle} from '../../model/bundle/bundle.js';
import {evaluateMatchedTrials} from '../../model/evaluation/comparison.js';
import {manifestDiff} from '../../model/bundle/diff.js';
import type {CandidateRecord} from '../../model/promotion/records.js';
import {compareReplay} from '../../model/evaluation/replay.js';
import {checkServeable} from '../../model/bundle/serveability.js';
import type {ScenarioStore} from '../../store/index.js';
import {evidenceProblem, readEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {readNegativeResult} from '../../store/kinds/promotion/negative-result.js';
import {readManifestDiff} from '../../store/kinds/bundle/manifest-diff.js';

/** The checks a promotion (and a canary) passes: the gates that need no lock, and a rejected candidate's refusal. */

export const negativeProblem = (digest: string) =>
  `candidate ${digest} has a negative_result.json: it was rejected, whatever its record says; nothing ` +
  `was promoted (run autoctx verify)`;

const changedProblem = (store: ScenarioStore, digest: string, now_: CandidateRecord | null) =>
  `candidate ${digest} changed while promote checked it (it is now ` +
  `${now_?.lifecycle ?? 'gone'}${readNegativeResult(store, digest) ? ', with a negative result' : ''});` +
  ` nothing was promoted`;

/**
 * Under the lock, what a negative result beside a confirmed record means: a
 * rejection that went on while promote read (the record is no longer what it
 * read: CAS_LOST, exit 6), or a rejection cut short between its negative
 * result and its record (INTEGRITY, exit 8: verify names it, repair completes
 * it). A rejection writes both under the lock, so only there is the pair read
 * whole; outside it a rejection half done looks like the second.
 */
export function refuseRejected(store: ScenarioStore, digest: string, record: CandidateRecord): never {
  const now_ = readRecord(store, digest);
  if (!now_ || now_.lifecycle !== 'confirmed' || !jsonEqual(now_.comparison, record.comparison))
    fail('CAS_LOST', changedProblem(store, digest, now_));
  fail('INTEGRITY', negativeProblem(digest));
}

/**
 * Every check that needs no lock: the record, the evidence, the replay, serveability, the diff. The negative result is
 * the caller's (read under the lock).
 */
export function checkGates(
  store: ScenarioStore,
  candidate: ContextBundle,
  parent: ContextBundle,
  record: CandidateRecord,
) {
  if (!record.comparison || record.comparison.decision !== 'confirmed')
    fail('NOT_CONFIRMED', `candidate ${candidate.digest} has no confirmed comparison`);
  const evidence = readEvidence(store, candidate.digest);
  if (!evidence || evidence.legacy || !evidence.confirmation_policy)
    fail('INTEGRITY', `candidate ${candidate.digest} has no schema-2 matched evidence to replay`);
  if (record.confirmation_policy_digest !== evidence.confirmation_policy_digest)
    fail('INTEGRITY', 'the record and the evidence envelope were decided under different policies');
  const plan = readPlan(store, candidate.digest);
  const problem = evidenceProblem(store, candidate, evidence, plan, record);
  if (problem) fail('INTEGRITY', `${problem}; nothing was promoted (run autoctx verify)`);
  const cohorts = new Set(evidence.trials.map((t) => t.cohort));
  if (cohorts.size !== 1) fail('INTEGRITY', `promotion evidence must use exactly one cohort, found ${cohorts.size}`);
  const replayed = evaluateMatchedTrials(candidate, evidence.trials, evidence.confirmation_policy);
  const verdict = compareReplay(record.comparison, replayed);
  if (!verdict.matches || replayed.decision !== 'confirmed')
    fail(
      'REPLAY_MISMATCH',
      `the recorded comparison does not reproduce from the persisted evidence (largest distance ` +
        `${verdict.max_ulp} ULP); nothing was promoted`,
    );
  try {
    checkServeable(candidate, parent);
  } catch (error) {
    if (error instanceof AutoctxError)
      throw new AutoctxError(error.code, `${error.message}; the candidate stays confirmed`);
    throw error;
  }
  const diff = manifestDiff(candidate, parent);
  const stored = readManifestDiff(store, candidate.digest);
  if (stored && !jsonEqual(stored, diff))
    fail('INTEGRITY', 'manifest_diff.json does not equal the diff recomputed from the manifests');
  return {evidence, diff, storedDiff: stored !== null, cohort: [...cohorts][0]!};
}
