import fs from 'node:fs';
import {fail} from '../../errors.js';
import {boundPlanFrom, planFileOf, type BoundPlan} from '../../model/evaluator-plan.js';
import {readDocument} from '../documents.js';
import {readBytes} from '../fs.js';
import type {KindContext} from './context.js';
import {checkPolicy, type Findings} from '../findings.js';

/**
 * candidates/<digest>/evaluator_plan.json: the immutable plan, in the Python
 * implementation's shape, with autoctx's additions beside it. A file in the
 * older shape (additions inside the plan) is read and verified as it is.
 */
export const PLAN_SCHEMA = 'evaluator-plan' as const;

export function readPlan(ctx: KindContext, digest: string): BoundPlan | null {
  return readDocument<BoundPlan>(ctx.guard, ctx.paths.evaluatorPlan(digest), PLAN_SCHEMA, (value) => {
    const p = boundPlanFrom(value);
    if (p.plan.candidate_digest !== digest) fail('INVALID_INPUT', `the plan is for candidate ${p.plan.candidate_digest}`);
    return p;
  });
}

export function writePlan(ctx: KindContext, plan: BoundPlan): boolean {
  return ctx.writer.createDocument(ctx.paths.evaluatorPlan(plan.plan.candidate_digest), PLAN_SCHEMA, planFileOf(plan));
}

/** The bytes of the plan as stored, compared before every arm. */
export function readPlanText(ctx: KindContext, digest: string): string | null {
  return readBytes(ctx.guard, ctx.paths.evaluatorPlan(digest))?.toString('utf8') ?? null;
}

/** Per plan file: the stat under which its bytes were last found equal to those bound. */
const planStamps = new Map<string, string>();

/**
 * True when the plan still holds exactly `text`, as checked before every arm:
 * one lstat per call; the bytes are read and compared again only when the
 * file's identity, size or times (its ctime moves with any change) differ
 * from when they were last found equal.
 */
export function planHolds(ctx: KindContext, digest: string, text: string): boolean {
  const file = ctx.paths.evaluatorPlan(digest);
  ctx.guard.check(file);
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(file, {bigint: true});
  } catch {
    return false;
  }
  const stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  if (st.isFile() && planStamps.get(file) === stamp) return true;
  const same = readPlanText(ctx, digest) === text;
  if (same && st.isFile()) planStamps.set(file, stamp);
  else planStamps.delete(file);
  return same;
}

/** verify: plan_digest (and in the current shape additions_digest) match, the plan names this candidate, its policy matches its digest. */
export function verifyPlan(c: Findings, digest: string): BoundPlan | null | undefined {
  const file = c.store.paths.evaluatorPlan(digest);
  return c.attempt(file, () =>
    readDocument<BoundPlan>(c.store.guard, file, PLAN_SCHEMA, (v) => {
      const p = boundPlanFrom(v);
      if (p.plan.candidate_digest !== digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: names candidate ${p.plan.candidate_digest}`);
      checkPolicy(c, file, p.plan.confirmation_policy, p.plan.confirmation_policy_digest);
      return p;
    }),
  );
}
