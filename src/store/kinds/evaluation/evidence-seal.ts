import {fail} from '../../../errors.js';
import {
  compareWithSeal,
  evidenceSeal,
  type MatchedTrial,
  type SealComparison,
} from '../../../model/evaluation/trial.js';
import {readDocument} from '../../documents.js';
import type {KindContext} from '../common/kind-context.js';
import {planBindingDigest, type BoundPlan} from '../../../model/evaluation/evaluator-plan.js';
import type {Findings} from '../../findings.js';
import {isoTimestamp} from '../../../model/promotion/records.js';
import {replaceSigned} from '../signing/signatures.js';

/**
 * candidates/<digest>/evidence_seal.json: the digest of every trial as
 * recorded, and the binding digest of the plan they were recorded under, so
 * that a change to any score, or to what the plan binds beside it (the audit,
 * the campaign), is found even where it moves no replayed statistic.
 */
export const SEAL_SCHEMA = 'evidence-seal' as const;

export interface StoredSeal {
  trial_digests: Record<string, string>;
  /** Absent in seals written before the binding was recorded. */
  plan_binding_digest: string | null;
}

export function readEvidenceSeal(ctx: KindContext, digest: string): StoredSeal | null {
  return readDocument(ctx.guard, ctx.paths.evidenceSeal(digest), SEAL_SCHEMA, (value) => {
    const seal = value as unknown as {
      candidate_digest: string;
      trial_digests: Record<string, string>;
      plan_binding_digest?: string;
    };
    if (seal.candidate_digest !== digest)
      fail('INVALID_INPUT', `the evidence seal is for candidate ${seal.candidate_digest}`);
    return {trial_digests: seal.trial_digests, plan_binding_digest: seal.plan_binding_digest ?? null};
  });
}

/**
 * Written after each pair's evidence and before its record (ARCHITECTURE §5);
 * trials recorded since the last seal (a run killed in between) are reported
 * by verify and sealed by the next run or by repair.
 */
export function writeEvidenceSeal(
  ctx: KindContext,
  digest: string,
  trials: readonly MatchedTrial[],
  planBinding: string | null,
  digestOf?: (t: MatchedTrial) => string,
): void {
  const seal = evidenceSeal(digest, trials, planBinding, digestOf);
  // In a signed tree the seal carries the time it was made: the signed time its key is checked at.
  if (ctx.signer)
    replaceSigned(
      ctx,
      ctx.paths.evidenceSeal(digest),
      SEAL_SCHEMA,
      {...seal, sealed_at: isoTimestamp(new Date())},
      'trial-seal',
    );
  else ctx.writer.replaceDocument(ctx.paths.evidenceSeal(digest), SEAL_SCHEMA, seal);
}

/** How a seal's plan binding stands against the plan bound now: null when it agrees. */
export type BindingProblem = 'unbound' | 'other-plan' | 'plan-missing';

/**
 * The seal's plan binding against the plan bound now (null: the plan file is
 * absent). A seal under a plan of the current shape must record its binding
 * and the binding must be that plan's; a seal that records one needs its plan.
 */
export function bindingProblem(seal: StoredSeal, plan: BoundPlan | null): BindingProblem | null {
  if (plan === null) return seal.plan_binding_digest !== null ? 'plan-missing' : null;
  if (seal.plan_binding_digest === null) return plan.legacy ? null : 'unbound';
  return seal.plan_binding_digest === planBindingDigest(plan) ? null : 'other-plan';
}

/** Whether the sealed trials are all in the evidence as sealed. */
export function sealHolds(status: SealComparison): boolean {
  return status.changed.length === 0 && status.missing.length === 0;
}

/**
 * Why the recorded evidence cannot be trusted against its seal, or null: a
 * sealed trial changed or gone, or trials sealed under another plan binding
 * than the plan bound now (the audit or campaign edited beside the plan).
 * Trials recorded after the seal are not a problem here (repair seals them).
 */
export function sealProblem(
  ctx: KindContext,
  digest: string,
  trials: readonly MatchedTrial[],
  plan: BoundPlan | null,
): string | null {
  const seal = readEvidenceSeal(ctx, digest);
  if (!seal) return null;
  const status = compareWithSeal(seal.trial_digests, trials);
  if (!sealHolds(status))
    return (
      `the matched trials of ${digest} differ from evidence_seal.json (${status.changed.length} changed, ` +
      `${status.missing.length} missing): the evidence was edited`
    );
  const binding = bindingProblem(seal, plan);
  if (binding === 'unbound')
    return `evidence_seal.json of ${digest} does not record the binding of its evaluator_plan.json`;
  if (binding === 'other-plan')
    return (
      `evaluator_plan.json of ${digest} is not the plan (with its audit and campaign) that ` +
      `evidence_seal.json sealed the trials under`
    );
  if (binding === 'plan-missing')
    return `evidence_seal.json of ${digest} seals trials under a plan, but evaluator_plan.json is missing`;
  return null;
}

/**
 * verify: every sealed trial is in the evidence exactly as sealed, and the seal
 * was made under the plan bound now (its additions included); trials recorded
 * after the seal are a warning that repair completes. `plan` is the plan as
 * verify read it (null: absent; undefined: refused, and reported by its own check).
 */
export function verifySeal(
  c: Findings,
  digest: string,
  trials: MatchedTrial[],
  plan: BoundPlan | null | undefined,
): StoredSeal | null | undefined {
  const {store} = c;
  const file = store.paths.matchedTrials(digest);
  const sealFile = store.paths.evidenceSeal(digest);
  const seal = c.attempt(sealFile, () => readEvidenceSeal(store, digest));
  if (!seal) return seal;
  const status = c.attempt(file, () => compareWithSeal(seal.trial_digests, trials));
  if (!status) return seal;
  for (const i of status.changed)
    c.both(
      file,
      sealFile,
      'EVIDENCE_SEAL_MISMATCH',
      `${c.rel(file)}: trial ${i} differs from the trial ${c.rel(sealFile)} sealed`,
    );
  for (const key of status.missing)
    c.both(file, sealFile, 'EVIDENCE_SEAL_MISMATCH', `${c.rel(file)}: sealed pair ${key} is missing from the evidence`);
  if (status.unsealed > 0)
    c.warn(
      sealFile,
      'UNSEALED_TRIALS',
      `${c.rel(file)}: ${status.unsealed} trial(s) recorded after ${c.rel(sealFile)} was written (an ` +
        `interrupted write, or trials added by another tool; autoctx repair seals them)`,
    );
  if (plan === undefined) return seal;
  const planFile = store.paths.evaluatorPlan(digest);
  const binding = bindingProblem(seal, plan);
  if (binding === 'plan-missing')
    c.both(
      sealFile,
      planFile,
      'MISSING_PLAN',
      `${c.rel(sealFile)} seals trials under a plan, but ${c.rel(planFile)} is missing`,
    );
  if (binding === 'unbound')
    c.both(
      sealFile,
      planFile,
      'EVIDENCE_SEAL_MISMATCH',
      `${c.rel(sealFile)} does not record the plan binding of ${c.rel(planFile)}, which every seal under ` +
        `such a plan records`,
    );
  if (binding === 'other-plan')
    c.both(
      sealFile,
      planFile,
      'EVIDENCE_SEAL_MISMATCH',
      `${c.rel(sealFile)} sealed the trials under another plan or other additions than ${c.rel(planFile)} ` +
        `binds now (the audit or campaign binding changed)`,
    );
  return seal;
}
