import {exists} from '../../store/files/fs.js';
import {readSigningStart} from '../../store/kinds/signing/signing-records.js';
import {listReleaseScopes} from '../../store/kinds/release/release-receipt.js';
import {registryState, settleRegistry} from '../../store/kinds/release/release-registry.js';
import path from 'node:path';
import {indexHandoff} from '../delivery/curation.js';
import {isSafeSegment} from '../../store/index.js';
import {isAutoctxError} from '../../errors.js';
import {evaluateMatchedTrials} from '../../model/evaluation/comparison.js';
import {confirmationPolicyDigest, validateConfirmationPolicy} from '../../model/evaluation/policy.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {compareReplay} from '../../model/evaluation/replay.js';
import {compareWithSeal, createMatchedTrial} from '../../model/evaluation/trial.js';
import {leftoverKind, sweepAbandonedEvaluationFolders, type ScenarioStore} from '../../store/index.js';
import {planBindingDigest} from '../../model/evaluation/evaluator-plan.js';
import {markRejected} from '../promotion/rejection.js';
import {lockTimeout, now, openKnowledge, type StoreOptions} from './store-options.js';
import {finishPointerMove} from '../promotion/pointer-move.js';
import {checkActor, commandActor} from './actor.js';
import {rejectionOf, withdrawRelease} from '../release/serving.js';

/** The plan binding a seal records: that of the bound plan, or none when there is no plan. */
function planBinding(store: ScenarioStore, digest: string): string | null {
  const plan = store.readPlan(digest);
  return plan ? planBindingDigest(plan) : null;
}

export interface RepairResult {
  status: 'repaired';
  scenarios: string[];
  actions: string[];
  remaining: string[];
}

/**
 * Complete or remove what an interrupted run left behind: lifecycles and
 * mirrors behind the pointer, missing discoverable copies of negative results,
 * temporary files, and legacy evidence whose replay reproduces its record
 * (rewritten as schema 2). What cannot be completed safely is listed, not
 * touched.
 */
export async function repair(options: StoreOptions): Promise<RepairResult> {
  if (options.actor !== undefined) checkActor(options.actor);
  const knowledge = openKnowledge(options);
  const names = options.scenario !== undefined ? [knowledge.resolveScenario(options.scenario)] : knowledge.listScenarios();
  const actions: string[] = [];
  const remaining: string[] = [];
  // Evaluation folders (autoctx-bundles-*) left by runs that died: they are per machine, outside the tree.
  for (const dir of sweepAbandonedEvaluationFolders()) actions.push(`removed ${dir}, the evaluation folder of a run that died`);
  for (const name of names) {
    const store = knowledge.scenario(name);
    const signed = readSigningStart(store) !== null;
    await store.withLock(lockTimeout(options), () => {
      const rel = (p: string) => path.relative(knowledge.root, p);
      for (const entry of store.walk()) {
        const leftover = entry.kind === 'file' || entry.kind === 'dir' ? leftoverKind(entry.path, entry.kind) : null;
        if (leftover === 'temp' || leftover === 'upstream-temp' || leftover === 'stale-lock') {
          store.removeLeftover(entry.path);
          actions.push(`removed ${rel(entry.path)}`);
        } else if (entry.kind === 'file' && entry.path.endsWith('.sig') && !exists(entry.path.slice(0, -4))) {
          store.removeLeftover(entry.path);
          actions.push(`removed ${rel(entry.path)}, a signature whose record a crash cut short`);
        } else if (leftover === 'lock' && store.removeAbandonedLock(entry.path)) {
          actions.push(`removed ${rel(entry.path)}, a lock its owner left when it died`);
        }
      }
      // Harness validators' runtime files derive from their manifests: missing or changed ones are written again.
      for (const digest of store.listBundleDigests()) {
        try {
          const bundle = store.readBundle(digest);
          if (!bundle?.components.some((x) => x.kind === 'harness_validator')) continue;
          for (const key of store.writeHarnessRuntime(bundle)) actions.push(`wrote ${rel(store.paths.harnessFile(digest, key))} from its manifest`);
        } catch (error) {
          if (!isAutoctxError(error)) throw error;
          remaining.push(`${rel(store.paths.bundle(digest))}: ${error.message}; its runtime validators, if any, are left as they are`);
        }
      }
      // A curation change or a handoff write cut short: completed from what it had written.
      try {
        const settled = store.settleCuration();
        let curation = settled.curation;
        if (settled.completed) actions.push(`completed ${rel(store.paths.curation)} from ${rel(store.paths.curationEntry(curation.seq))}, a change cut short after its history entry`);
        for (const id of store.handoffIds()) {
          const pending = isSafeSegment(id) ? store.pendingHandoff(curation, id) : null;
          if (!pending) continue;
          curation = indexHandoff(store, pending, isoTimestamp(now(options)));
          actions.push(`recorded ${rel(store.paths.handoffRevision(id, pending.revision))} in ${rel(store.paths.curation)}, a handoff write cut short`);
        }
      } catch (error) {
        if (!isAutoctxError(error)) throw error;
        remaining.push(`${rel(store.paths.curation)}: ${error.message}; left as it is`);
      }
      // A transition cut short after its receipt: the registry is written from the receipt.
      for (const scope of listReleaseScopes(store)) {
        try {
          const done = settleRegistry(store, registryState(store, scope));
          if (done) actions.push(`completed ${rel(store.paths.releaseRegistry(scope))} from ${rel(store.paths.releaseReceipt(scope, done.seq))}, a transition cut short after its receipt`);
        } catch (error) {
          if (!isAutoctxError(error)) throw error;
          remaining.push(`${rel(store.paths.releaseRegistry(scope))}: ${error.message}; left as it is`);
        }
      }
      const active = store.readActive();
      const unrecorded = active ? store.pointerProblem(active) : null;
      // A pointer its recorded history does not vouch for is never completed: no mirrors, no lifecycles follow it.
      if (unrecorded) remaining.push(`${rel(store.paths.active)}: ${unrecorded}; left as it is`);
      if (active && !unrecorded) {
        const bundle = store.readBundle(active.bundle_digest);
        if (bundle) store.writeMirrors(bundle);
        for (const d of finishPointerMove(store, active, now(options))) actions.push(`brought the lifecycle of ${d} in line with active.json`);
      }
      const adoption = store.readHistoryAdoption();
      for (const digest of store.listCandidateDigests()) {
        let record = store.readRecord(digest);
        // A change cut short after its history entry is completed from the entry; a record without a history gets one.
        const history = store.recordHistoryState(digest, record, adoption);
        if (history.kind === 'behind') {
          store.completeRecordFromHistory(history.entry);
          record = history.entry.record;
          actions.push(`completed ${rel(store.paths.record(digest))} from ${rel(store.paths.recordHistoryEntry(digest, history.entry.seq))}, a change cut short after its history entry`);
        } else if (history.kind === 'differs' && !record) {
          store.completeRecordFromHistory(history.entry);
          record = history.entry.record;
          actions.push(`restored ${rel(store.paths.record(digest))} from ${rel(store.paths.recordHistoryEntry(digest, history.entry.seq))}`);
        }
        if (!record) {
          remaining.push(`${rel(store.paths.candidateDir(digest))} has no record.json: run the same autoctx propose again`);
          continue;
        }
        const negative = store.readNegativeResult(digest);
        if (negative && !store.readNegativeLedgerCopy(digest)) {
          store.writeNegativeResult(digest, negative);
          actions.push(`restored ${rel(store.paths.negativeLedger(digest))}`);
        }
        if (negative && record.lifecycle !== 'rejected' && record.lifecycle !== 'active' && record.lifecycle !== 'superseded') {
          // A rejection interrupted between its negative result and its record: the negative result proves it.
          const reason = String((negative.entries as Array<{reason?: unknown}> | undefined)?.[0]?.reason ?? 'rejected');
          markRejected(store, digest, {reason, at: isoTimestamp(now(options))}, 'repair');
          actions.push(`completed the rejection of ${digest} that ${rel(store.paths.negativeResult(digest))} records`);
          continue;
        }
        const evidence = store.readEvidence(digest);
        const plan = store.readPlan(digest);
        // Nothing is derived from evidence that is not what a run of the bound plan records, or that its seal does not vouch for.
        const problem = evidence ? store.evidenceProblem(store.requireBundle(digest), evidence, plan, record) : null;
        if (problem) {
          remaining.push(`${rel(store.paths.matchedTrials(digest))}: ${problem}; left as it is`);
          continue;
        }
        // A record with no history, or changed without it, whose evidence holds: repair is the person's word
        // (after verify named it) that the record is to be kept as it stands, another implementation's change, say.
        if (history.kind === 'adoptable' || history.kind === 'differs') {
          store.adoptRecord(record);
          actions.push(history.kind === 'adoptable' ? `started the record history of ${digest} from its record.json, which had none` : `recorded in the history of ${digest} the change of its record.json that the history did not hold (made by another implementation or by hand)`);
        }
        const stored = evidence && !evidence.legacy ? store.readEvidenceSeal(digest) : null;
        const seal = evidence && stored ? compareWithSeal(stored.trial_digests, evidence.trials) : null;
        const unsealed = seal ? seal.unsealed > 0 : evidence !== null && !evidence.legacy && evidence.trials.length > 0 && record.comparison === null && plan !== null && !plan.upstream;
        if (evidence && unsealed && signed) {
          // In a signed tree a seal is a signature over trials a run observed: repair observed none, so it reports them.
          remaining.push(`${rel(store.paths.matchedTrials(digest))} holds trials recorded after its seal; in a signed tree repair does not seal what it did not observe: run the same confirm again (with the signing key) to seal them`);
          continue; // nor does it decide on them
        } else if (evidence && unsealed) {
          store.writeEvidenceSeal(digest, evidence.trials, planBinding(store, digest));
          actions.push(`sealed the trials of ${rel(store.paths.matchedTrials(digest))} recorded after its seal`);
        }
        if (evidence && !evidence.legacy && evidence.confirmation_policy && record.lifecycle !== 'rejected' && record.lifecycle !== 'active' && record.lifecycle !== 'superseded') {
          const replayed = evaluateMatchedTrials(store.requireBundle(digest), evidence.trials, evidence.confirmation_policy);
          if (!record.comparison || !compareReplay(record.comparison, replayed).matches) {
            if (replayed.decision === 'rejected' || replayed.decision === 'inconclusive') {
              remaining.push(`${rel(store.paths.record(digest))} lags evidence that is terminal; run the same confirm again to write its terminal records`);
            } else {
              const lifecycle = replayed.decision === 'confirmed' ? 'confirmed' : replayed.decision === 'needs_screen' ? record.lifecycle : 'screened';
              store.writeRecord({...record, schema_version: 2, lifecycle, comparison: replayed, confirmation_policy: evidence.confirmation_policy, confirmation_policy_digest: evidence.confirmation_policy_digest, rationale: replayed.reason, updated_at: isoTimestamp(now(options))}, 'repair');
              actions.push(`brought ${rel(store.paths.record(digest))} up to its evidence`);
            }
          }
          continue;
        }
        if (!evidence?.legacy) continue;
        const policy = record.confirmation_policy ? validateConfirmationPolicy(record.confirmation_policy) : null;
        if (!record.comparison || !policy) {
          remaining.push(`${rel(store.paths.matchedTrials(digest))} is legacy evidence without a recorded policy; migrate it under the policy it was recorded with: autoctx trials migrate ${digest.slice(0, 12)} --policy FILE`);
          continue;
        }
        const replayed = evaluateMatchedTrials(store.requireBundle(digest), evidence.trials, policy);
        if (!compareReplay(record.comparison, replayed).matches) {
          remaining.push(`${rel(store.paths.matchedTrials(digest))} is legacy evidence that does not reproduce its record; left as it is`);
          continue;
        }
        store.writeEvidence(digest, evidence.trials.map((t) => createMatchedTrial(t)), policy);
        store.writeEvidenceSeal(digest, evidence.trials.map((t) => createMatchedTrial(t)), planBinding(store, digest));
        store.writeRecord({...record, schema_version: 2, confirmation_policy_digest: confirmationPolicyDigest(policy), updated_at: isoTimestamp(now(options))}, 'repair');
        actions.push(`migrated ${rel(store.paths.matchedTrials(digest))} to schema 2 after a verified replay`);
      }
      // A rejected bundle never serves: a CANARY or SHADOW of one (as an older autoctx left it) is ended, each by its receipt.
      for (const digest of store.listCandidateDigests()) {
        try {
          if (rejectionOf(store, digest) === null) continue;
          for (const w of withdrawRelease(store, digest, {rationale: 'withdrawn by repair: its candidate is rejected', at: isoTimestamp(now(options)), actor: commandActor(store, options.actor)})) {
            actions.push(`ended the ${w.from} of release ${w.version} in scope ${w.scope} (${rel(store.paths.releaseReceipt(w.scope, w.receipt_seq))}): its bundle ${digest} is rejected`);
          }
        } catch (error) {
          if (!isAutoctxError(error)) throw error;
          remaining.push(`the releases of ${digest}: ${error.message}; left as they are`);
        }
      }
    });
  }
  // The state area's leftovers: writing commands and hooks sweep only the folders they write into.
  const area = knowledge.state();
  if (area.exists()) {
    const removed = await area.withLock(lockTimeout(options), () => area.sweepAll());
    for (const file of removed) actions.push(`removed ${path.relative(knowledge.root, file)}`);
  }
  return {status: 'repaired', scenarios: names, actions, remaining};
}
