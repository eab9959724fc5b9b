import {evaluateMatchedTrials} from '../../model/evaluation/comparison.js';
import {planBindingDigest} from '../../model/evaluation/evaluator-plan.js';
import {
  confirmationPolicyDigest,
  validateConfirmationPolicy,
  type ConfirmationPolicy,
} from '../../model/evaluation/policy.js';
import {compareReplay} from '../../model/evaluation/replay.js';
import {compareWithSeal, createMatchedTrial} from '../../model/evaluation/trial.js';
import {isoTimestamp, type CandidateRecord} from '../../model/promotion/records.js';
import type {ScenarioStore} from '../../store/index.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import type {RepairRun, ScenarioRepair} from '../../store/kinds/common/kind-steps.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import {readEvidenceSeal, writeEvidenceSeal} from '../../store/kinds/evaluation/evidence-seal.js';
import {
  evidenceProblem,
  readEvidence,
  writeEvidence,
  type MatchedEvidence,
} from '../../store/kinds/evaluation/matched-evidence.js';
import {
  listCandidateDigests,
  putRecord,
  readRecord,
  writeRecord,
} from '../../store/kinds/promotion/candidate-record.js';
import {readAdoption, type AdoptionRead} from '../../store/kinds/promotion/history-adoption.js';
import {
  readNegativeLedgerCopy,
  readNegativeResult,
  writeNegativeResult,
} from '../../store/kinds/promotion/negative-result.js';
import {
  adoptRecord,
  historyEntryFile,
  historyState,
  type HistoryState,
} from '../../store/kinds/promotion/record-history.js';
import {markRejected} from './rejection.js';
import {pendingMoveBundles} from '../../store/kinds/promotion/divergence.js';

/**
 * repair, candidate by candidate: a record behind its history, a rejection
 * cut short, trials recorded after their seal, a record behind its evidence,
 * and legacy evidence whose replay reproduces its record (rewritten as schema
 * 2). Evidence that is not what autoctx could have produced is left as it is.
 */
export const candidatesRepair: ScenarioRepair = {
  order: 600,
  repair(run) {
    const adoption = readAdoption(run.store);
    for (const digest of listCandidateDigests(run.store)) repairCandidate(run, digest, adoption);
  },
};

/** A lifecycle that can still move: not rejected, active or superseded. */
function undecided(record: CandidateRecord): boolean {
  return record.lifecycle !== 'rejected' && record.lifecycle !== 'active' && record.lifecycle !== 'superseded';
}

/** The plan binding a seal records: that of the bound plan, or none when there is no plan. */
function planBinding(store: ScenarioStore, digest: string): string | null {
  const plan = readPlan(store, digest);
  return plan ? planBindingDigest(plan) : null;
}

function repairCandidate(run: RepairRun, digest: string, adoption: AdoptionRead): void {
  const {store, rel, remaining} = run;
  const {record, history} = recordFromHistory(run, digest, adoption);
  if (!record) {
    remaining.push(`${rel(store.paths.candidateDir(digest))} has no record.json: run the same autoctx propose again`);
    return;
  }
  if (completeRejection(run, digest, record)) return;
  const evidence = readEvidence(store, digest);
  const plan = readPlan(store, digest);
  // Nothing is derived from evidence that is not what a run of the bound plan records, or that its seal does not vouch
  // for.
  const problem = evidence ? evidenceProblem(store, requireBundle(store, digest), evidence, plan, record) : null;
  if (problem) {
    remaining.push(`${rel(store.paths.matchedTrials(digest))}: ${problem}; left as it is`);
    return;
  }
  adoptChange(run, digest, record, history);
  // nor does it decide on them
  if (!sealLateTrials(run, digest, record, evidence, plan !== null && !plan.upstream)) return;
  if (evidence && !evidence.legacy && evidence.confirmation_policy && undecided(record)) {
    catchUp(run, digest, record, evidence, evidence.confirmation_policy);
    return;
  }
  if (evidence?.legacy) migrateLegacy(run, digest, record, evidence);
}

/**
 * A change cut short after its history entry is completed from the entry; a record without a history gets one later.
 */
function recordFromHistory(
  run: RepairRun,
  digest: string,
  adoption: AdoptionRead,
): {record: CandidateRecord | null; history: HistoryState} {
  const {store, rel, actions} = run;
  const record = readRecord(store, digest);
  const history = historyState(store, digest, record, adoption);
  const waiting = history.kind === 'behind' && history.entry.cause === 'pointer-move' ? pendingMove(run, digest) : null;
  if (history.kind === 'behind' && waiting) {
    // The lifecycle change of a move whose pointer is not there: its command, run again, completes both.
    run.remaining.push(
      `${rel(store.paths.record(digest))} is behind ` +
        `${rel(store.paths.recordHistoryEntry(digest, history.entry.seq))}, a lifecycle change of ` +
        `${rel(waiting.file)}, whose pointer move is not in active.json (the tree was partly reverted, as by ` +
        `git stash): run the same ${waiting.move.kind} again ` +
        `(${
          waiting.move.kind === 'promotion'
            ? `autoctx promote ${waiting.move.to}`
            : `autoctx ` + `${waiting.move.kind === 'rollover' ? 'epoch rollover' : 'rollback'}`
        }` +
        `), or restore the reverted files (git stash pop)`,
    );
    return {record, history};
  }
  if (history.kind === 'behind' || (history.kind === 'differs' && !record)) {
    putRecord(store, history.entry.record);
    const from = rel(historyEntryFile(store, history.entry));
    actions.push(
      history.kind === 'behind'
        ? `completed ${rel(store.paths.record(digest))} from ${from}, a change cut short after its history entry`
        : `restored ${rel(store.paths.record(digest))} from ${from}`,
    );
    return {record: history.entry.record, history};
  }
  return {record, history};
}

const pendingMoves = new WeakMap<RepairRun, ReturnType<typeof pendingMoveBundles>>();

/** The pending pointer move that would change this bundle's lifecycle (read once per repair of a scenario), or null. */
function pendingMove(run: RepairRun, digest: string) {
  let moves = pendingMoves.get(run);
  if (!moves) pendingMoves.set(run, (moves = pendingMoveBundles(run.store)));
  return moves.get(digest) ?? null;
}

/**
 * The discoverable copy of a negative result, and a rejection interrupted between its negative result and its record.
 */
function completeRejection(run: RepairRun, digest: string, record: CandidateRecord): boolean {
  const {store, rel, actions} = run;
  const negative = readNegativeResult(store, digest);
  if (negative && !readNegativeLedgerCopy(store, digest)) {
    writeNegativeResult(store, digest, negative);
    actions.push(`restored ${rel(store.paths.negativeLedger(digest))}`);
  }
  if (!negative || !undecided(record)) return false;
  // The negative result proves the rejection.
  const reason = String((negative.entries as Array<{reason?: unknown}> | undefined)?.[0]?.reason ?? 'rejected');
  markRejected(store, digest, {reason, at: isoTimestamp(run.now())}, 'repair');
  actions.push(`completed the rejection of ${digest} that ${rel(store.paths.negativeResult(digest))} records`);
  return true;
}

/**
 * A record with no history, or changed without it, whose evidence holds:
 * repair is the person's word (after verify named it) that the record is to
 * be kept as it stands, another implementation's change, say.
 */
function adoptChange(run: RepairRun, digest: string, record: CandidateRecord, history: HistoryState): void {
  if (history.kind !== 'adoptable' && history.kind !== 'differs') return;
  adoptRecord(run.store, record);
  run.actions.push(
    history.kind === 'adoptable'
      ? `started the record history of ${digest} from its record.json, which had none`
      : `recorded in the history of ${digest} the change of its record.json that the history did not hold ` +
          `(made by another implementation or by hand)`,
  );
}

/** Trials recorded after their seal are sealed, except in a signed tree; false: the candidate is left there. */
function sealLateTrials(
  run: RepairRun,
  digest: string,
  record: CandidateRecord,
  evidence: MatchedEvidence | null,
  ownPlan: boolean,
): boolean {
  const {store, rel} = run;
  const stored = evidence && !evidence.legacy ? readEvidenceSeal(store, digest) : null;
  const seal = evidence && stored ? compareWithSeal(stored.trial_digests, evidence.trials) : null;
  const unsealed = seal
    ? seal.unsealed > 0
    : evidence !== null && !evidence.legacy && evidence.trials.length > 0 && record.comparison === null && ownPlan;
  if (!evidence || !unsealed) return true;
  if (run.signed) {
    // In a signed tree a seal is a signature over trials a run observed: repair observed none, so it reports them.
    run.remaining.push(
      `${rel(store.paths.matchedTrials(digest))} holds trials recorded after its seal; in a signed tree ` +
        `repair does not seal what it did not observe: run the same confirm again (with the signing key) to ` +
        `seal them`,
    );
    return false;
  }
  writeEvidenceSeal(store, digest, evidence.trials, planBinding(store, digest));
  run.actions.push(`sealed the trials of ${rel(store.paths.matchedTrials(digest))} recorded after its seal`);
  return true;
}

/** A record before its decision that lags its evidence is brought up to it (a terminal decision is left to confirm). */
function catchUp(
  run: RepairRun,
  digest: string,
  record: CandidateRecord,
  evidence: MatchedEvidence,
  policy: ConfirmationPolicy,
): void {
  const {store, rel} = run;
  const replayed = evaluateMatchedTrials(requireBundle(store, digest), evidence.trials, policy);
  if (record.comparison && compareReplay(record.comparison, replayed).matches) return;
  if (replayed.decision === 'rejected' || replayed.decision === 'inconclusive') {
    run.remaining.push(
      `${rel(store.paths.record(digest))} lags evidence that is terminal; run the same confirm again to ` +
        `write its terminal records`,
    );
    return;
  }
  const lifecycle =
    replayed.decision === 'confirmed'
      ? 'confirmed'
      : replayed.decision === 'needs_screen'
        ? record.lifecycle
        : 'screened';
  writeRecord(
    store,
    {
      ...record,
      schema_version: 2,
      lifecycle,
      comparison: replayed,
      confirmation_policy: policy,
      confirmation_policy_digest: evidence.confirmation_policy_digest,
      rationale: replayed.reason,
      updated_at: isoTimestamp(run.now()),
    },
    'repair',
  );
  run.actions.push(`brought ${rel(store.paths.record(digest))} up to its evidence`);
}

/** Legacy evidence whose replay reproduces its record is rewritten as schema 2 and sealed. */
function migrateLegacy(run: RepairRun, digest: string, record: CandidateRecord, evidence: MatchedEvidence): void {
  const {store, rel, remaining} = run;
  const policy = record.confirmation_policy ? validateConfirmationPolicy(record.confirmation_policy) : null;
  if (!record.comparison || !policy) {
    remaining.push(
      `${rel(store.paths.matchedTrials(digest))} is legacy evidence without a recorded policy; migrate it ` +
        `under the policy it was recorded with: autoctx trials migrate ${digest.slice(0, 12)} --policy FILE`,
    );
    return;
  }
  const replayed = evaluateMatchedTrials(requireBundle(store, digest), evidence.trials, policy);
  if (!compareReplay(record.comparison, replayed).matches) {
    remaining.push(
      `${rel(store.paths.matchedTrials(digest))} is legacy evidence that does not reproduce its record; left as it is`,
    );
    return;
  }
  writeEvidence(
    store,
    digest,
    evidence.trials.map((t) => createMatchedTrial(t)),
    policy,
  );
  writeEvidenceSeal(
    store,
    digest,
    evidence.trials.map((t) => createMatchedTrial(t)),
    planBinding(store, digest),
  );
  writeRecord(
    store,
    {
      ...record,
      schema_version: 2,
      confirmation_policy_digest: confirmationPolicyDigest(policy),
      updated_at: isoTimestamp(run.now()),
    },
    'repair',
  );
  run.actions.push(`migrated ${rel(store.paths.matchedTrials(digest))} to schema 2 after a verified replay`);
}
