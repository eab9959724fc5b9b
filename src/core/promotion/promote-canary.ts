import {fail, AutoctxError} from '../../errors.js';
import {runAudit} from '../../evaluator/audit.js';
import type {ScenarioStore} from '../../store/index.js';
import {evaluatorTimeout} from '../common/store-options.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {readNegativeResult} from '../../store/kinds/promotion/negative-result.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {checkGates, negativeProblem} from './promote-checks.js';

/**
 * What a CANARY needs (spec 003: a canary serves real sessions, so it needs
 * everything ACTIVE needs but the final swap): a confirmed comparison of this
 * bundle against the bundle active.json names now, that replays from the
 * persisted evidence, with serveability, the recomputed diff, one cohort and
 * the bound pre_promotion audit passing. Returns the first blocker, or null.
 * Nothing is written.
 */
export async function canaryEvidence(
  store: ScenarioStore,
  digest: string,
  options: {timeoutSeconds?: number | undefined},
): Promise<{code: string; detail: string} | null> {
  const auditTimeout = evaluatorTimeout(options.timeoutSeconds);
  const candidate = requireBundle(store, digest);
  const record = readRecord(store, digest);
  if (!record || !record.comparison)
    return {
      code: 'EVALUATION_MISSING',
      detail:
        `bundle ${digest} has no recorded comparison: propose, screen and confirm it against the active ` +
        `bundle first`,
    };
  if (record.lifecycle !== 'confirmed' || record.comparison.decision !== 'confirmed')
    return {
      code: 'EVALUATION_NOT_CONFIRMED',
      detail:
        `candidate ${digest} is ${record.lifecycle}, its comparison ${record.comparison.decision}: a canary ` +
        `needs a confirmed comparison`,
    };
  const active = requireActive(store);
  if (candidate.parent_digest !== active.bundle_digest) {
    return {
      code: 'EVALUATION_NOT_FOR_BUNDLE_HASH',
      detail:
        `the confirmed comparison on record compares ${digest} with ${candidate.parent_digest ?? 'nothing'}, ` +
        `not with the bundle active.json names now (${active.bundle_digest})`,
    };
  }
  try {
    if (readNegativeResult(store, digest)) fail('INTEGRITY', negativeProblem(digest));
    const parent = requireBundle(store, candidate.parent_digest);
    const {diff} = checkGates(store, candidate, parent, record);
    const plan = readPlan(store, digest);
    const bound = plan?.additions.audit?.command ?? null;
    if (bound !== null) {
      const audit = await runAudit(
        bound,
        'pre_promotion',
        {
          scenario: store.scenario,
          candidate_digest: digest,
          comparison: record.comparison,
          confirmation_policy_digest: record.confirmation_policy_digest,
          plan_digest: plan?.plan_digest ?? null,
          manifest_diff_digest: diff.digest,
        },
        auditTimeout,
      );
      if (audit.outcome !== 'advisory')
        return {
          code: 'AUDIT_HOLD',
          detail: `the pre_promotion audit answered ${audit.outcome}${audit.detail ? ` (${audit.detail})` : ''}`,
        };
    }
  } catch (error) {
    if (error instanceof AutoctxError && ![1, 7, 9].includes(error.exitCode))
      return {code: error.code, detail: error.message};
    throw error;
  }
  return null;
}
