import {fail, isAutoctxError, rethrowUnless} from '../../errors.js';
import {evaluateMatchedTrials} from '../../model/evaluation/comparison.js';
import {validateConfirmationPolicy} from '../../model/evaluation/policy.js';
import type {ComparisonResult} from '../../model/promotion/records.js';
import {compareReplay, type ReplayCheck} from '../../model/evaluation/replay.js';
import type {ScenarioStore} from '../../store/index.js';
import {openScenario, type StoreOptions} from '../common/store-options.js';
import {resolveDigest} from '../common/resolve.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {evidenceProblem, readEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import {replayGuardrails, type GuardrailReplay} from '../promotion/guardrail-gate.js';

export interface ReplayResult {
  status: 'ok' | 'mismatch';
  scenario: string;
  bundle_digest: string;
  bit_exact: boolean;
  max_ulp: number;
  max_relative_to_half_width: number;
  recorded: ComparisonResult;
  replayed: ComparisonResult;
  fields: ReplayCheck[];
  /** The promotion guardrails' verdicts computed again, when the candidate was promoted under guardrails. */
  guardrails?: GuardrailReplay;
}

/** Recompute a candidate's decision from its persisted evidence and policy and compare it with the record. */
export function replayCandidate(store: ScenarioStore, digest: string): ReplayResult | null {
  const record = readRecord(store, digest);
  if (!record?.comparison) return null;
  const evidence = readEvidence(store, digest);
  if (!evidence) return null;
  const bundle = requireBundle(store, digest);
  const policy =
    evidence.confirmation_policy ??
    (record.confirmation_policy ? validateConfirmationPolicy(record.confirmation_policy) : null);
  if (!policy)
    fail(
      'INTEGRITY',
      `candidate ${digest} has legacy (schema-1) evidence and no recorded policy to replay it under; ` +
        `migrate it under the policy it was recorded with: autoctx trials migrate ${digest.slice(0, 12)} ` +
        `--policy FILE`,
      {legacy_without_policy: true},
    );
  let replayed: ComparisonResult;
  try {
    replayed = evaluateMatchedTrials(bundle, evidence.trials, policy);
  } catch (error) {
    rethrowUnless(error, isAutoctxError, (e) => (e as Error | null)?.name === 'RangeError');
    fail('REPLAY_MISMATCH', `the evidence of ${digest} cannot be replayed: ${(error as Error).message}`);
  }
  const verdict = compareReplay(record.comparison, replayed);
  return {
    status: verdict.matches ? 'ok' : 'mismatch',
    scenario: store.scenario,
    bundle_digest: digest,
    bit_exact: verdict.bit_exact,
    max_ulp: verdict.max_ulp,
    max_relative_to_half_width: verdict.max_relative_to_half_width,
    recorded: record.comparison,
    replayed,
    fields: verdict.fields,
  };
}

/** `autoctx replay`: the field-by-field comparison, exit 8 on a mismatch. */
export function replay(options: StoreOptions & {candidate: string}): ReplayResult {
  const store = openScenario(options);
  const digest = resolveDigest(store, options.candidate);
  const r = replayCandidate(store, digest);
  if (!r) fail('NOT_CONFIRMED', `candidate ${digest} has no recorded comparison and evidence to replay`);
  // A replay vouches for a decision only from evidence autoctx could have recorded.
  const problem = evidenceProblem(
    store,
    requireBundle(store, digest),
    readEvidence(store, digest)!,
    readPlan(store, digest),
    readRecord(store, digest),
  );
  if (problem) fail('INTEGRITY', `${problem}; the replay would vouch for nothing (run autoctx verify)`);
  const guardrails = replayGuardrails(store, digest);
  if (!guardrails) return r;
  return {...r, status: guardrails.status === 'mismatch' ? 'mismatch' : r.status, guardrails};
}
