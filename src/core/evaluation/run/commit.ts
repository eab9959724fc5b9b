/**
 * Committing a run's pairs: each pair appended to the run's journal, the
 * journal folded into the evidence, its seal and the record under the
 * scenario lock, and the journal an interrupted run left taken back in.
 */
import {jsonEqual} from '../../../canonical/index.js';
import {planBindingDigest} from '../../../model/evaluation/evaluator-plan.js';
import {isoTimestamp, type CandidateRecord, type ComparisonResult} from '../../../model/promotion/records.js';
import {compareWithSeal, trialSealDigest, type MatchedTrial} from '../../../model/evaluation/trial.js';
import {stoppingRuleProblems, trialPlanProblems} from '../../../model/evaluation/plan-binding.js';
import {pausePoint} from '../../../store/index.js';
import {lockTimeout, now} from '../../common/store-options.js';
import {lifecycleFor} from './lifecycle.js';
import type {Run} from './types.js';
import {readEvidenceSeal, writeEvidenceSeal} from '../../../store/kinds/evaluation/evidence-seal.js';
import {readRecord, writeRecord} from '../../../store/kinds/promotion/candidate-record.js';
import {writeEvidence} from '../../../store/kinds/evaluation/matched-evidence.js';
import {writeTrialObservations} from '../../../store/kinds/evaluation/trial-observations.js';
import type {PairObservation} from '../../../model/evaluation/observations.js';

/**
 * Seal what is recorded when the seal does not cover it all: after each pair,
 * and on recovery for trials an interrupted run recorded (prepareRun has
 * checked that they are units of the plan and that the seal holds).
 */
function sealTrials(run: Run, written: boolean): void {
  const {store, candidate} = run;
  if (run.trials.length === 0) return;
  if (!written) {
    const seal = readEvidenceSeal(store, candidate.digest);
    if (seal && compareWithSeal(seal.trial_digests, run.trials).unsealed === 0) return;
  }
  writeEvidenceSeal(store, candidate.digest, run.trials, planBindingDigest(run.plan), (t) => sealDigestOf(t));
}

/** Each trial's seal digest, hashed once per run (the engine never changes a trial it recorded). */
const sealDigests = new WeakMap<MatchedTrial, string>();
function sealDigestOf(t: MatchedTrial): string {
  let d = sealDigests.get(t);
  if (d === undefined) sealDigests.set(t, (d = trialSealDigest(t)));
  return d;
}

/**
 * The candidate's record as it is now, or null when it was rejected (or made
 * to serve) while the run evaluated it: then the run records nothing more.
 */
function recordNow(run: Run): CandidateRecord | null {
  const current = readRecord(run.store, run.candidate.digest)!;
  if (current.lifecycle !== 'rejected' && current.lifecycle !== 'active' && current.lifecycle !== 'superseded')
    return current;
  run.halted = current.lifecycle;
  run.record = current;
  return null;
}

/** The candidate changed under the run: the pairs only its journal holds are not kept. */
export function dropUnfolded(run: Run): void {
  for (const t of run.trials.slice(run.trials.length - run.unfolded)) run.observations.delete(t.pair_key);
  run.trials.length -= run.unfolded;
  run.unfolded = 0;
  run.journal?.discard();
}

/**
 * One pair, recorded durably before the next decision: appended to the run's
 * journal (a cost that does not grow with the pairs before it), unless the
 * candidate was rejected (or made to serve) while this run evaluated; then
 * the run records nothing more. That check is repeated under the scenario
 * lock when the journal is folded.
 */
export async function recordPair(run: Run, trial: MatchedTrial, observation: PairObservation | null): Promise<void> {
  pausePoint('run:before-commit');
  if (recordNow(run) === null) {
    run.trials.pop();
    dropUnfolded(run);
    return;
  }
  await run.journal!.ready();
  run.journal!.append(trial, observation);
  if (observation) run.observations.set(trial.pair_key, observation);
  run.unfolded++;
}

/** The observations of the recorded pairs (what trial_observations.json holds after a fold). */
function recordedObservations(run: Run): Map<string, PairObservation> {
  const out = new Map<string, PairObservation>();
  for (const t of run.trials) {
    const o = run.observations.get(t.pair_key);
    if (o) out.set(t.pair_key, o);
  }
  return out;
}

/**
 * Fold the journal into the evidence: the envelope, then its seal, then the
 * record (ARCHITECTURE §5), under the scenario lock, re-checking the record
 * first; then the journal goes. A decided record always has its seal, and a
 * crash anywhere is completed by the next run. Run at each lane boundary, at
 * the end of a run and when a run resumes.
 */
export async function fold(run: Run, decision: ComparisonResult): Promise<void> {
  const {store, options} = run;
  pausePoint('run:before-fold');
  await store.withLock(lockTimeout(options), () => {
    // Re-checked under the lock: a candidate rejected (or made to serve) while this run evaluated records nothing more.
    const current = recordNow(run);
    if (current === null) {
      dropUnfolded(run);
      return;
    }
    const written = run.unfolded > 0;
    if (written) writeEvidence(store, run.candidate.digest, run.trials, run.policy);
    // What was observed of the pairs, in the same fold (descriptive: after the evidence, before its seal and record).
    writeTrialObservations(store, run.candidate.digest, recordedObservations(run));
    sealTrials(run, written);
    const lifecycle = lifecycleFor(decision.decision, current.lifecycle);
    if (jsonEqual(current.comparison, decision) && current.lifecycle === lifecycle) return;
    const updated: CandidateRecord = {
      ...current,
      schema_version: 2,
      lifecycle,
      comparison: decision,
      confirmation_policy: run.policy,
      confirmation_policy_digest: run.plan.plan.confirmation_policy_digest,
      rationale: decision.reason,
      updated_at: isoTimestamp(now(options)),
    };
    run.record = writeRecord(store, updated, 'evaluate');
  });
  run.unfolded = 0;
  run.journal?.discard();
}

/**
 * Open the run's journal, and take in the pairs an interrupted run of this
 * candidate left there: only pairs not yet in the evidence, and only when
 * the evidence with them is what a run of the bound plan records. A journal
 * that fails any check is set aside (its pairs are evaluated again).
 */
export async function openJournal(run: Run): Promise<void> {
  const {journal, pending} = await run.store.openRunJournal(
    run.candidate.digest,
    run.plan.plan_digest,
    lockTimeout(run.options),
  );
  run.journal = journal;
  run.unfolded = 0;
  if (!pending || pending.refused || pending.trials.length === 0) return;
  const recorded = new Map(run.trials.map((t) => [t.pair_key, t]));
  const observed = (t: MatchedTrial) => {
    const o = pending.observations.get(t.pair_key);
    if (o) run.observations.set(t.pair_key, o);
  };
  const added: MatchedTrial[] = [];
  for (const t of pending.trials) {
    const known = recorded.get(t.pair_key);
    if (known) {
      if (!jsonEqual(known, t)) return; // not what this candidate's evidence holds: set aside
      observed(t); // folded before a crash that came before its observations were
      continue;
    }
    recorded.set(t.pair_key, t);
    added.push(t);
  }
  if (added.length === 0) return;
  const trials = [...run.trials, ...added];
  if (
    trialPlanProblems(run.plan, trials).length > 0 ||
    stoppingRuleProblems(run.candidate, run.plan, trials, run.policy).length > 0
  )
    return;
  run.trials.push(...added);
  for (const t of added) observed(t);
  run.unfolded = added.length;
}
