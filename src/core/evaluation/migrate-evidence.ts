import {prepareSigning, signingInputs} from '../signing/signing.js';
import {jsonEqual} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {evaluateMatchedTrials} from '../../model/evaluation/comparison.js';
import {planBindingDigest} from '../../model/evaluation/evaluator-plan.js';
import {confirmationPolicyDigest, DEFAULT_CONFIRMATION_POLICY} from '../../model/evaluation/policy.js';
import {isoTimestamp, type CandidateRecord} from '../../model/promotion/records.js';
import {compareReplay} from '../../model/evaluation/replay.js';
import {createMatchedTrial} from '../../model/evaluation/trial.js';
import type {ScenarioStore} from '../../store/index.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {resolveDigest} from '../common/resolve.js';
import {loadPolicy} from './run/plan-policy.js';
import {readEvidence, writeEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {readRecord, writeRecord} from '../../store/kinds/promotion/candidate-record.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import {writeEvidenceSeal} from '../../store/kinds/evaluation/evidence-seal.js';

export interface MigrateOptions extends StoreOptions {
  candidate: string;
  policyFile: string;
}

export interface MigrateResult {
  status: 'migrated' | 'unchanged';
  scenario: string;
  candidate_digest: string;
  lifecycle: CandidateRecord['lifecycle'];
  trials: number;
  confirmation_policy_digest: string;
  bit_exact: boolean;
}

/** The lifecycle a replayed terminal decision gives, as upstream's migration maps it: confirmed and rejected only. */
const TERMINAL: Record<string, CandidateRecord['lifecycle'] | undefined> = {
  confirmed: 'confirmed',
  rejected: 'rejected',
};

/**
 * Why the legacy evidence of a candidate cannot be migrated under the policy,
 * or null; and the replay that decides it. The Python implementation's rule
 * (migrate_terminal_matched_evidence): only a terminal (confirmed or
 * rejected) candidate, and only when replaying its trials under the policy
 * reproduces the recorded comparison and its lifecycle.
 */
function migrationProblem(store: ScenarioStore, digest: string, record: CandidateRecord, policyFile: string) {
  const evidence = readEvidence(store, digest); // legacy rows that collapse to one pair identity are refused here
  if (!evidence) fail('INVALID_TRANSITION', `candidate ${digest} has no matched_trials.json to migrate`);
  const policy = loadPolicy(policyFile, null, DEFAULT_CONFIRMATION_POLICY);
  if (!evidence.legacy) return {evidence, policy, replay: null};
  if (record.lifecycle !== 'confirmed' && record.lifecycle !== 'rejected')
    fail(
      'INVALID_TRANSITION',
      `candidate ${digest} is ${record.lifecycle}: only a terminal (confirmed or rejected) candidate's ` +
        `schema-1 evidence is migrated; nothing was rewritten`,
    );
  if (!record.comparison)
    fail(
      'INTEGRITY',
      `candidate ${digest} is ${record.lifecycle} but records no comparison to replay its schema-1 ` +
        `evidence against; nothing was rewritten`,
    );
  if (record.confirmation_policy && !jsonEqual(record.confirmation_policy, policy))
    fail(
      'POLICY_MISMATCH',
      `${policyFile} is not the policy record.json names (${record.confirmation_policy_digest}); nothing was rewritten`,
    );
  const replayed = evaluateMatchedTrials(requireBundle(store, digest), evidence.trials, policy);
  const replay = compareReplay(record.comparison, replayed);
  if (!replay.matches)
    fail(
      'REPLAY_MISMATCH',
      `the schema-1 evidence of ${digest} does not reproduce its recorded comparison under ${policyFile} ` +
        `(largest distance ${replay.max_ulp} ULP); nothing was rewritten`,
    );
  if (TERMINAL[replayed.decision] !== record.lifecycle)
    fail(
      'REPLAY_MISMATCH',
      `the schema-1 evidence of ${digest} replays to "${replayed.decision}", which does not give its ` +
        `lifecycle "${record.lifecycle}"; nothing was rewritten`,
    );
  return {evidence, policy, replay};
}

/**
 * Migrate a candidate's legacy (schema-1) evidence to the schema-2 envelope
 * under a given policy, as the Python implementation's explicit migration
 * does: verified by replay before anything is written, then the seal, the
 * record's policy and the envelope (the same trials). A confirmed candidate can
 * then be promoted. Evidence already in schema 2 is left as it is.
 */
export async function migrateEvidence(options: MigrateOptions): Promise<MigrateResult> {
  const inputs = signingInputs(options);
  const store = openScenario(options);
  prepareSigning(store, options, {actor: null, role: 'sign'}, inputs);
  const digest = resolveDigest(store, options.candidate);
  const first = readRecord(store, digest);
  if (!first) fail('INVALID_TRANSITION', `bundle ${digest} is not a proposed candidate (no record.json)`);
  migrationProblem(store, digest, first, options.policyFile); // every refusal before the lock
  return store.withLock(lockTimeout(options), () => {
    const record = readRecord(store, digest)!;
    const {evidence, policy, replay} = migrationProblem(store, digest, record, options.policyFile);
    const policyDigest = confirmationPolicyDigest(policy);
    const result = (status: MigrateResult['status']): MigrateResult => ({
      status,
      scenario: store.scenario,
      candidate_digest: digest,
      lifecycle: record.lifecycle,
      trials: evidence.trials.length,
      confirmation_policy_digest: evidence.confirmation_policy_digest ?? policyDigest,
      bit_exact: replay?.bit_exact ?? true,
    });
    if (!evidence.legacy) return result('unchanged');
    const trials = evidence.trials.map((t) => createMatchedTrial(t)); // the same trials, under their current pair keys
    const plan = readPlan(store, digest);
    // The seal and the record's policy first, the envelope last: until the envelope is rewritten the evidence is
    // schema 1 beside a policy that replays it (a state verify accepts and this command, or repair, completes).
    writeEvidenceSeal(store, digest, trials, plan ? planBindingDigest(plan) : null);
    if (!record.confirmation_policy)
      writeRecord(
        store,
        {
          ...record,
          schema_version: 2,
          confirmation_policy: policy,
          confirmation_policy_digest: policyDigest,
          updated_at: isoTimestamp(now(options)),
        },
        'migrate',
      );
    writeEvidence(store, digest, trials, policy);
    return result('migrated');
  });
}
