import {fail} from '../errors.js';
import {matchedEvidenceDigest} from '../model/evidence-digests.js';
import {createNegativeResult} from '../model/negative-result.js';
import {isoTimestamp} from '../model/records.js';
import {lockTimeout, now, openScenario, type StoreOptions} from './context.js';
import {resolveDigest} from './resolve.js';

export interface RejectResult {
  status: 'rejected';
  scenario: string;
  bundle_digest: string;
  already_rejected: boolean;
}

/** Abandon a candidate that is not serving: terminal, recorded, with a negative result. */
export async function reject(options: StoreOptions & {candidate: string; rationale: string}): Promise<RejectResult> {
  if (typeof options.rationale !== 'string' || options.rationale.trim() === '') fail('USAGE', 'reject needs a non-blank --rationale');
  const store = openScenario(options);
  const digest = resolveDigest(store, options.candidate);
  const bundle = store.requireBundle(digest);
  return store.withLock(lockTimeout(options), () => {
    const record = store.readRecord(digest);
    if (!record) fail('INVALID_TRANSITION', `bundle ${digest} is not a candidate`);
    if (record.lifecycle === 'rejected') return {status: 'rejected' as const, scenario: store.scenario, bundle_digest: digest, already_rejected: true};
    if (record.lifecycle === 'active' || record.lifecycle === 'superseded') fail('INVALID_TRANSITION', `bundle ${digest} is ${record.lifecycle}; use rollback to stop serving it`);
    const at = isoTimestamp(now(options));
    const evidence = store.readEvidence(digest);
    const plan = store.readPlan(digest);
    const trials = evidence?.trials ?? [];
    const sorted = [...trials].sort((a, b) => (a.lane < b.lane ? -1 : a.lane > b.lane ? 1 : a.pair_key < b.pair_key ? -1 : 1));
    store.writeNegativeResult(
      digest,
      createNegativeResult({
        scenario: store.scenario,
        digest,
        evaluator_epoch: bundle.evaluator_epoch,
        cohort: plan?.plan.cohort ?? trials[0]?.cohort ?? null,
        kind: 'rejected',
        reason: `rejected by hand: ${options.rationale}`,
        comparison: record.comparison,
        trials,
        evidence_binding_digest: evidence?.confirmation_policy ? matchedEvidenceDigest({trials: sorted, confirmation_policy: evidence.confirmation_policy, confirmation_policy_digest: evidence.confirmation_policy_digest}) : null,
        confirmation_policy_digest: evidence?.confirmation_policy_digest ?? null,
        plan_digest: plan?.plan_digest ?? null,
        occurred_at: record.created_at,
        generated_at: at,
      }),
    );
    store.writeRecord({...record, lifecycle: 'rejected', rationale: `rejected by hand: ${options.rationale}`, updated_at: at});
    return {status: 'rejected' as const, scenario: store.scenario, bundle_digest: digest, already_rejected: false};
  });
}
