import {stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {guardrailSet} from '../promotion/guardrails.js';
import {confirmationPolicyDigest, type ConfirmationPolicy} from './policy.js';
import type {PlanUnit} from './fixtures.js';

/** Who evaluates: the command, how it is run, and an optional version label. */
export interface EvaluatorIdentity {
  command: string;
  mode: 'per-arm' | 'persistent' | 'external';
  version: string | null;
}

/**
 * The plan object exactly as the Python implementation writes and resumes it
 * (upstream-autocontext.md §3.3); `plan_digest` is the digest of this object.
 */
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
}

/**
 * A file the evaluator command names, with its digest when the plan was bound (path relative to the working folder).
 */
export interface EvaluatorFile {
  path: string;
  sha256: string;
}

/**
 * What autoctx binds beside the plan: the audit command, the campaign (null:
 * none), and the files the evaluator command names (absent when it names
 * none, and in plans bound before they were recorded).
 */
export interface PlanAdditions {
  audit: {command: string} | null;
  campaign_id: string | null;
  evaluator_files?: EvaluatorFile[];
  /** The plans bound before this one (a rebind while nothing was recorded), oldest first. */
  supersedes?: string[];
  /**
   * Promotion guardrails (model/promotion/guardrails.ts), canonical and sorted; absent when none. Checked before
   * promotion, never part of the decision.
   */
  guardrails?: string[];
}

/**
 * The first evaluator file that differs between the bound plan and now (null: none, or the bound plan recorded none).
 */
export function evaluatorFileChange(bound: PlanAdditions, now: readonly EvaluatorFile[]): string | null {
  if (bound.evaluator_files === undefined) return null;
  const then = new Map(bound.evaluator_files.map((f) => [f.path, f.sha256]));
  const current = new Map(now.map((f) => [f.path, f.sha256]));
  for (const [p, d] of then)
    if (current.get(p) !== d)
      return current.has(p)
        ? `${p} changed since the plan was bound (sha256 ${d.slice(0, 12)}…, now ${current.get(p)!.slice(0, 12)}…)`
        : `${p}, which the evaluator command named when the plan was bound, is not there now (paths are ` +
            `relative to the working folder)`;
  for (const p of current.keys())
    if (!then.has(p)) return `${p} is named by the evaluator command now but was not when the plan was bound`;
  return null;
}

const identityText = (e: EvaluatorIdentity) =>
  `${JSON.stringify(e.command)} (${e.mode}` +
  `${e.version === null || e.version === undefined ? '' : `, version ${JSON.stringify(e.version)}`})`;

/**
 * What differs between the bound evaluator and the one asked for now, in words: the command, its mode or its version
 * label first (a different script is a different command, not a vanished file), then the files it names. Null: the
 * same evaluator.
 */
export function evaluatorChange(
  bound: BoundPlan,
  now: EvaluatorIdentity,
  files: readonly EvaluatorFile[],
): string | null {
  const then = bound.plan.candidate_evaluator.evaluator;
  if (
    stableDigest(then) !== stableDigest(now) ||
    stableDigest(bound.plan.incumbent_evaluator.evaluator) !== stableDigest(now)
  )
    return `the evaluator is now ${identityText(now)}, and the plan was bound with ${identityText(then)}`;
  return evaluatorFileChange(bound.additions, files);
}

/** The keys a plan written before the additions moved out of it holds inside `plan`. */
const ADDITION_KEYS = ['audit', 'campaign_id'] as const;

/**
 * evaluator_plan.json as autoctx writes it: the upstream plan, and autoctx's additions beside it under a digest of
 * their own.
 */
export interface EvaluatorPlanFile {
  plan: EvaluatorPlanBody;
  plan_digest: string;
  additions: PlanAdditions;
  additions_digest: string;
}

/**
 * A bound plan as read, whatever its shape: `legacy` is a file written before
 * the additions moved beside the plan (they were inside it, under plan_digest,
 * and it has no additions_digest). Legacy files are read and verified as they
 * are, never rewritten.
 */
export interface BoundPlan {
  plan: EvaluatorPlanBody;
  plan_digest: string;
  additions: PlanAdditions;
  /** Null for a legacy file, whose additions plan_digest covers. */
  additions_digest: string | null;
  legacy: boolean;
  /**
   * Exactly the Python implementation's shape: the plan's eleven keys and
   * nothing of autoctx's. Only such a candidate may lack a trial seal (that
   * implementation writes none); its evidence is checked by replay alone.
   */
  upstream: boolean;
}

/** The keys of the plan object the Python implementation writes, and nothing else. */
const UPSTREAM_PLAN_KEYS = [
  'candidate_digest',
  'candidate_evaluator',
  'cohort',
  'confirmation_policy',
  'confirmation_policy_digest',
  'evaluator_epoch',
  'incumbent_digest',
  'incumbent_evaluator',
  'scenario',
  'schema_version',
  'units',
];

/** The digest that binds autoctx's additions to one plan. */
export function planAdditionsDigest(planDigest: string, additions: PlanAdditions): string {
  return stableDigest({plan_digest: planDigest, additions});
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
  evaluator_files?: readonly EvaluatorFile[];
  supersedes?: readonly string[];
  guardrails?: readonly string[];
}): BoundPlan {
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
  };
  const planDigest = stableDigest(plan);
  const additions: PlanAdditions = {
    audit: args.audit === null ? null : {command: args.audit},
    campaign_id: args.campaign_id,
    ...(args.evaluator_files && args.evaluator_files.length > 0 ? {evaluator_files: [...args.evaluator_files]} : {}),
    ...(args.supersedes && args.supersedes.length > 0 ? {supersedes: [...args.supersedes]} : {}),
    ...(args.guardrails && args.guardrails.length > 0 ? {guardrails: [...args.guardrails]} : {}),
  };
  return {
    plan,
    plan_digest: planDigest,
    additions,
    additions_digest: planAdditionsDigest(planDigest, additions),
    legacy: false,
    upstream: false,
  };
}

/** The document to write for a plan bound now (never a legacy one). */
export function planFileOf(bound: BoundPlan): EvaluatorPlanFile {
  if (bound.legacy || bound.additions_digest === null)
    throw new Error('internal: a legacy plan is never written again');
  return {
    plan: bound.plan,
    plan_digest: bound.plan_digest,
    additions: bound.additions,
    additions_digest: bound.additions_digest,
  };
}

/**
 * Read evaluator_plan.json in either shape and check its digests: plan_digest
 * over `plan`; in the current shape also additions_digest over {plan_digest,
 * additions}, and no addition keys inside `plan`. Refusals name the field.
 */
export function boundPlanFrom(value: unknown): BoundPlan {
  const doc = value as {
    plan: Record<string, unknown>;
    plan_digest: string;
    additions?: PlanAdditions;
    additions_digest?: string;
  };
  if (stableDigest(doc.plan) !== doc.plan_digest) fail('DIGEST_MISMATCH', 'plan_digest does not match the plan');
  const plan = doc.plan as unknown as EvaluatorPlanBody & Partial<PlanAdditions>;
  if (doc.additions === undefined && doc.additions_digest === undefined) {
    const {audit = null, campaign_id = null, ...body} = plan;
    const keys = Object.keys(plan).sort();
    const upstream = keys.length === UPSTREAM_PLAN_KEYS.length && keys.every((k, i) => k === UPSTREAM_PLAN_KEYS[i]);
    return {
      plan: body as EvaluatorPlanBody,
      plan_digest: doc.plan_digest,
      additions: {audit, campaign_id},
      additions_digest: null,
      legacy: true,
      upstream,
    };
  }
  if (doc.additions === undefined || doc.additions_digest === undefined)
    fail('SCHEMA_VIOLATION', 'additions and additions_digest must be both present or both absent');
  for (const key of ADDITION_KEYS)
    if (key in plan) fail('SCHEMA_VIOLATION', `plan holds "${key}", which belongs in additions`);
  if (planAdditionsDigest(doc.plan_digest, doc.additions) !== doc.additions_digest)
    fail('DIGEST_MISMATCH', 'additions_digest does not match {plan_digest, additions}');
  const guardrails = doc.additions.guardrails;
  if (guardrails !== undefined && stableDigest(guardrailSet(guardrails)) !== stableDigest(guardrails))
    fail('SCHEMA_VIOLATION', 'additions.guardrails is not a sorted list of distinct guardrails in canonical spelling');
  return {
    plan,
    plan_digest: doc.plan_digest,
    additions: doc.additions,
    additions_digest: doc.additions_digest,
    legacy: false,
    upstream: false,
  };
}

/**
 * The digest that binds trials to their plan and its additions, recorded in
 * the trial seal: additions_digest, or for a legacy file plan_digest (which
 * covered its additions).
 */
export function planBindingDigest(bound: BoundPlan): string {
  return bound.additions_digest ?? bound.plan_digest;
}

/** What differs between a bound plan and a requested one, for a precise refusal. */
export function planDifference(
  bound: BoundPlan,
  requested: BoundPlan,
): 'evaluator' | 'audit' | 'campaign' | 'guardrails' | 'plan' | null {
  const strip = (p: EvaluatorPlanBody) => ({...p, candidate_evaluator: null, incumbent_evaluator: null});
  if (stableDigest(strip(bound.plan)) !== stableDigest(strip(requested.plan))) return 'plan';
  if (
    stableDigest(bound.plan.candidate_evaluator) !== stableDigest(requested.plan.candidate_evaluator) ||
    stableDigest(bound.plan.incumbent_evaluator) !== stableDigest(requested.plan.incumbent_evaluator)
  )
    return 'evaluator';
  if (stableDigest(bound.additions.audit) !== stableDigest(requested.additions.audit)) return 'audit';
  if (bound.additions.campaign_id !== requested.additions.campaign_id) return 'campaign';
  if (stableDigest(bound.additions.guardrails ?? []) !== stableDigest(requested.additions.guardrails ?? []))
    return 'guardrails';
  return null;
}
