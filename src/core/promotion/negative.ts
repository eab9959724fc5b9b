import type {ContextBundle} from '../../model/bundle/bundle.js';
import {matchedEvidenceDigest} from '../../model/evaluation/evidence-digests.js';
import {
  createNegativeResult,
  type NegativeKind,
  type ReservationBinding,
} from '../../model/promotion/negative-result.js';
import type {CandidateRecord, ComparisonResult} from '../../model/promotion/records.js';
import {sortEvidence} from '../../model/evaluation/trial.js';
import type {ScenarioStore} from '../../store/index.js';
import {readEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';

/**
 * The negative result for a candidate, bound to its persisted evidence (the
 * binding digest of the envelope), its policy and its plan, as they are on
 * disk. Under the scenario lock.
 */
export function negativeResultFor(
  store: ScenarioStore,
  candidate: ContextBundle,
  record: CandidateRecord,
  kind: NegativeKind,
  reason: string,
  extras: {comparison?: ComparisonResult | null; reservation_artifact?: ReservationBinding} = {},
): {document: Record<string, unknown>; evidenceDigest: string | null} {
  const evidence = readEvidence(store, candidate.digest);
  const plan = readPlan(store, candidate.digest);
  const trials = evidence?.trials ?? [];
  const binding =
    evidence?.confirmation_policy && evidence.confirmation_policy_digest
      ? matchedEvidenceDigest({
          trials: sortEvidence(trials),
          confirmation_policy: evidence.confirmation_policy,
          confirmation_policy_digest: evidence.confirmation_policy_digest,
        })
      : null;
  const document = createNegativeResult({
    scenario: store.scenario,
    digest: candidate.digest,
    evaluator_epoch: candidate.evaluator_epoch,
    cohort: plan?.plan.cohort ?? trials[0]?.cohort ?? null,
    kind,
    reason,
    comparison: extras.comparison === undefined ? record.comparison : extras.comparison,
    trials,
    evidence_binding_digest: binding,
    confirmation_policy_digest: evidence?.confirmation_policy_digest ?? null,
    plan_digest: plan?.plan_digest ?? null,
    reservation_artifact: extras.reservation_artifact,
    occurred_at: record.created_at,
  });
  return {document, evidenceDigest: binding};
}
