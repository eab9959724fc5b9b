import fs from 'node:fs';
import {fail, isSystemError, rethrowUnless} from '../../../errors.js';
import {boundPlanFrom, planFileOf, type BoundPlan} from '../../../model/evaluation/evaluator-plan.js';
import {readDocument} from '../../documents.js';
import {listDir, readBytes} from '../../files/fs.js';
import type {KindContext} from '../common/kind-context.js';
import {checkPolicy, type Findings} from '../../findings.js';
import type {CandidateCheck} from '../common/kind-steps.js';

/**
 * candidates/<digest>/evaluator_plan.json: the immutable plan, in the Python
 * implementation's shape, with autoctx's additions beside it. A file in the
 * older shape (additions inside the plan) is read and verified as it is.
 */
export const PLAN_SCHEMA = 'evaluator-plan' as const;

export function readPlan(ctx: KindContext, digest: string): BoundPlan | null {
  return readDocument<BoundPlan>(ctx.guard, ctx.paths.evaluatorPlan(digest), PLAN_SCHEMA, (value) => {
    const p = boundPlanFrom(value);
    if (p.plan.candidate_digest !== digest)
      fail('INVALID_INPUT', `the plan is for candidate ${p.plan.candidate_digest}`);
    return p;
  });
}

export function writePlan(ctx: KindContext, plan: BoundPlan): boolean {
  return ctx.writer.createDocument(ctx.paths.evaluatorPlan(plan.plan.candidate_digest), PLAN_SCHEMA, planFileOf(plan));
}

/**
 * A rebind (while no trial is recorded): the plan bound until now is kept,
 * unchanged, in superseded_plans/<its plan_digest>.json, then the new plan,
 * which names it in additions.supersedes, replaces evaluator_plan.json. A
 * crash between the two leaves the old plan bound beside its own copy, which
 * verify reports and the same command run again completes.
 */
export function rebindPlan(ctx: KindContext, old: BoundPlan, next: BoundPlan): void {
  const digest = old.plan.candidate_digest;
  ctx.writer.createDocument(ctx.paths.supersededPlan(digest, old.plan_digest), PLAN_SCHEMA, planFileOf(old));
  ctx.writer.replaceDocument(ctx.paths.evaluatorPlan(digest), PLAN_SCHEMA, planFileOf(next));
}

/** The plan digests of a candidate's superseded plans, from their file names. */
export function listSupersededPlans(ctx: KindContext, digest: string): string[] {
  return listDir(ctx.guard, ctx.paths.supersededPlansDir(digest))
    .filter((e) => e.isFile() && /^[0-9a-f]{64}\.json$/.test(e.name))
    .map((e) => e.name.slice(0, -5));
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
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return false;
  }
  const stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  if (st.isFile() && planStamps.get(file) === stamp) return true;
  const same = readPlanText(ctx, digest) === text;
  if (same && st.isFile()) planStamps.set(file, stamp);
  else planStamps.delete(file);
  return same;
}

/**
 * verify: plan_digest (and in the current shape additions_digest) match, the plan names this candidate, its policy
 * matches its digest.
 */
export function verifyPlan(c: Findings, digest: string): BoundPlan | null | undefined {
  return verifyPlanFile(c, digest, c.store.paths.evaluatorPlan(digest));
}

/**
 * verify: a rebind's history. Each plan evaluator_plan.json says it
 * supersedes is kept in superseded_plans/, valid, for this candidate, under
 * its own digest; no file there is one the plan does not name; and the bound
 * plan is none of them (that is an interrupted rebind). Returns the
 * superseded digests, which no trial may carry.
 */
export function verifySupersededPlans(c: Findings, digest: string, plan: BoundPlan | null | undefined): Set<string> {
  const {store} = c;
  const named = new Set(plan?.additions.supersedes ?? []);
  const found = new Set(listSupersededPlans(store, digest));
  const planFile = store.paths.evaluatorPlan(digest);
  for (const d of found) {
    const file = store.paths.supersededPlan(digest, d);
    const old = verifyPlanFile(c, digest, file);
    if (old && old.plan_digest !== d)
      c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)} holds plan ${old.plan_digest}, not the plan its name says`);
    if (plan && plan.plan_digest === d)
      c.warn(
        planFile,
        'REBIND_PENDING',
        `${c.rel(planFile)} is the plan kept as superseded in ${c.rel(file)}: an interrupted rebind (run ` +
          `the same command with --rebind again)`,
      );
    else if (plan && !named.has(d))
      c.error(
        file,
        'PLAN_HISTORY_MISMATCH',
        `${c.rel(file)} is a superseded plan that ${c.rel(planFile)} does not name`,
      );
  }
  if (plan === null && found.size > 0)
    c.error(
      planFile,
      'MISSING_PLAN',
      `${c.rel(planFile)} is missing, but ${c.rel(store.paths.supersededPlansDir(digest))}/ keeps the ` +
        `plans it superseded`,
    );
  for (const d of named) {
    if (!found.has(d))
      c.error(
        planFile,
        'PLAN_HISTORY_MISMATCH',
        `${c.rel(planFile)} supersedes plan ${d}, but ${c.rel(store.paths.supersededPlan(digest, d))} is missing`,
      );
  }
  return new Set([...named, ...found].filter((d) => d !== plan?.plan_digest));
}

function verifyPlanFile(c: Findings, digest: string, file: string): BoundPlan | null | undefined {
  return c.attempt(file, () =>
    readDocument<BoundPlan>(c.store.guard, file, PLAN_SCHEMA, (v) => {
      const p = boundPlanFrom(v);
      if (p.plan.candidate_digest !== digest)
        c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: names candidate ${p.plan.candidate_digest}`);
      checkPolicy(c, file, p.plan.confirmation_policy, p.plan.confirmation_policy_digest);
      return p;
    }),
  );
}

declare module '../common/kind-steps.js' {
  interface CandidateFacts {
    /** The bound plan, read and checked once; the evidence and its seal are checked against it. */
    plan: BoundPlan | null | undefined;
  }
}

export const planCheck: CandidateCheck = {
  order: 400,
  candidate(c, digest, facts) {
    facts.plan = verifyPlan(c, digest);
    verifySupersededPlans(c, digest, facts.plan);
  },
};
