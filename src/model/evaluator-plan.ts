import {stableDigest} from '../canonical/index.js';
import {confirmationPolicyDigest, type ConfirmationPolicy} from './policy.js';
import type {PlanUnit} from './fixtures.js';

/** Who evaluates: the command, how it is run, and an optional version label. */
export interface EvaluatorIdentity {
  command: string;
  mode: 'per-arm' | 'persistent' | 'external';
  version: string | null;
}

export interface EvaluatorPlanBody {
  schema_version: 1;
  scenario: string;
  evaluator_epoch: string;
  candidate_digest: string;
  incumbent_digest: string | null;
  cohort: string;
  confirmation_policy: ConfirmationPolicy;
  confirmation_policy_digest: string;
  units: PlanUnit[];
  candidate_evaluator: {evaluator: EvaluatorIdentity; bundle_digest: string};
  incumbent_evaluator: {evaluator: EvaluatorIdentity; bundle_digest: string | null};
  /** autoctx: the audit command bound when evaluation started (null: none). */
  audit: {command: string} | null;
  /** autoctx: the campaign the candidate is evaluated in (null: none). */
  campaign_id: string | null;
}

export interface EvaluatorPlan {
  plan: EvaluatorPlanBody;
  plan_digest: string;
}

export function createEvaluatorPlan(args: {
  scenario: string;
  evaluator_epoch: string;
  candidate_digest: string;
  incumbent_digest: string | null;
  cohort: string;
  confirmation_policy: ConfirmationPolicy;
  units: PlanUnit[];
  evaluator: EvaluatorIdentity;
  audit: string | null;
  campaign_id: string | null;
}): EvaluatorPlan {
  const plan: EvaluatorPlanBody = {
    schema_version: 1,
    scenario: args.scenario,
    evaluator_epoch: args.evaluator_epoch,
    candidate_digest: args.candidate_digest,
    incumbent_digest: args.incumbent_digest,
    cohort: args.cohort,
    confirmation_policy: args.confirmation_policy,
    confirmation_policy_digest: confirmationPolicyDigest(args.confirmation_policy),
    units: args.units,
    candidate_evaluator: {evaluator: args.evaluator, bundle_digest: args.candidate_digest},
    incumbent_evaluator: {evaluator: args.evaluator, bundle_digest: args.incumbent_digest},
    audit: args.audit === null ? null : {command: args.audit},
    campaign_id: args.campaign_id,
  };
  return {plan, plan_digest: stableDigest(plan)};
}

/** What differs between a bound plan and a requested one, for a precise refusal. */
export function planDifference(bound: EvaluatorPlanBody, requested: EvaluatorPlanBody): 'evaluator' | 'audit' | 'plan' | null {
  if (stableDigest(bound) === stableDigest(requested)) return null;
  const strip = (p: EvaluatorPlanBody) => ({...p, candidate_evaluator: null, incumbent_evaluator: null, audit: null});
  if (stableDigest(strip(bound)) === stableDigest(strip(requested))) {
    return stableDigest(bound.candidate_evaluator) !== stableDigest(requested.candidate_evaluator) || stableDigest(bound.incumbent_evaluator) !== stableDigest(requested.incumbent_evaluator) ? 'evaluator' : 'audit';
  }
  return 'plan';
}
