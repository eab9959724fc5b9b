import {readDocument} from '../../documents.js';
import {matchedEvidenceDigest} from '../../../model/evaluation/evidence-digests.js';
import type {BoundPlan} from '../../../model/evaluation/evaluator-plan.js';
import {sortEvidence} from '../../../model/evaluation/trial.js';
import {readEvidence} from '../evaluation/matched-evidence.js';
import type {KindContext} from '../common/kind-context.js';
import {jsonEqual} from '../../../canonical/index.js';
import type {Findings} from '../../findings.js';
import type {CandidateCheck, ScenarioCheck} from '../common/kind-steps.js';

/**
 * candidates/<digest>/negative_result.json and its discoverable copy in
 * negative_result_ledgers/: immutable, equal to each other.
 */
export const NEGATIVE_SCHEMA = 'negative-result' as const;

export function readNegativeResult(ctx: KindContext, digest: string): Record<string, unknown> | null {
  return readDocument<Record<string, unknown>>(ctx.guard, ctx.paths.negativeResult(digest), NEGATIVE_SCHEMA);
}

export function readNegativeLedgerCopy(ctx: KindContext, digest: string): Record<string, unknown> | null {
  return readDocument<Record<string, unknown>>(ctx.guard, ctx.paths.negativeLedger(digest), NEGATIVE_SCHEMA);
}

/**
 * Write negative_result.json once (an existing one is kept: it is immutable and
 * its timestamps would differ) and its discoverable copy, equal to it.
 */
export function writeNegativeResult(
  ctx: KindContext,
  digest: string,
  doc: Record<string, unknown>,
): Record<string, unknown> {
  const existing = readNegativeResult(ctx, digest);
  const kept = existing ?? doc;
  if (!existing) ctx.writer.createDocument(ctx.paths.negativeResult(digest), NEGATIVE_SCHEMA, kept);
  ctx.writer.createDocument(ctx.paths.negativeLedger(digest), NEGATIVE_SCHEMA, kept);
  return kept;
}

/**
 * Why a negative result is not this candidate's own, bound to its evidence
 * and plan as they are on disk (empty: it is): its run id and entries name
 * the candidate, and the digests its evidence references carry are those of
 * the candidate's matched trials envelope and plan.
 */
export function negativeBindingProblems(
  ctx: KindContext,
  digest: string,
  negative: Record<string, unknown>,
  plan: BoundPlan | null | undefined,
): string[] {
  const problems: string[] = [];
  if (negative.run_id !== `context-bundle:${digest}`)
    problems.push(`its run_id is ${JSON.stringify(negative.run_id)}, not "context-bundle:${digest}"`);
  const entries = (negative.entries ?? []) as Array<{
    branch_id?: unknown;
    context?: {context_bundle_digest?: unknown};
    evidence_refs?: Array<{uri?: unknown}>;
  }>;
  const base = `${ctx.scenario}/context_bundles/candidates/${digest}/`;
  let evidenceRef = false;
  for (const e of entries) {
    if (e.branch_id !== digest || e.context?.context_bundle_digest !== digest)
      problems.push(`an entry is about bundle ${JSON.stringify(e.context?.context_bundle_digest ?? e.branch_id)}`);
    for (const ref of e.evidence_refs ?? []) {
      const m =
        typeof ref.uri === 'string'
          ? /^(.*\/)(matched_trials|evaluator_plan)\.json#sha256=([0-9a-f]{64})$/.exec(ref.uri)
          : null;
      if (!m) continue;
      if (m[1] !== base) problems.push(`it references ${m[2]}.json of another candidate (${m[1]})`);
      if (m[2] === 'matched_trials') {
        evidenceRef = true;
        const evidence = readEvidence(ctx, digest);
        const bound = evidence?.confirmation_policy
          ? matchedEvidenceDigest({
              trials: sortEvidence(evidence.trials),
              confirmation_policy: evidence.confirmation_policy,
              confirmation_policy_digest: evidence.confirmation_policy_digest,
            })
          : null;
        if (bound !== m[3])
          problems.push(
            bound === null
              ? 'it is bound to matched trials the candidate does not have'
              : `it is bound to matched trials with digest ${m[3]}, but the candidate's evidence has ${bound}`,
          );
      }
      if (m[2] === 'evaluator_plan' && plan !== undefined && plan?.plan_digest !== m[3])
        problems.push(
          plan
            ? `it is bound to plan ${m[3]}, but the candidate's plan is ${plan.plan_digest}`
            : 'it is bound to a plan the candidate does not have',
        );
    }
  }
  if (!evidenceRef && entries.length > 0) {
    const evidence = readEvidence(ctx, digest);
    if (evidence && !evidence.legacy && evidence.trials.length > 0)
      problems.push('it is bound to no matched trials, but the candidate has evidence');
  }
  return problems;
}

/**
 * verify: a negative result and its discoverable copy are equal, and neither exists without the other (a missing copy
 * is repairable); it is bound to this candidate's own evidence.
 */
export function verifyNegativeResult(c: Findings, digest: string, plan: BoundPlan | null | undefined): void {
  const {store} = c;
  const file = store.paths.negativeResult(digest);
  const neg = c.attempt(file, () => readNegativeResult(store, digest));
  const copyFile = store.paths.negativeLedger(digest);
  const copy = c.attempt(copyFile, () => readNegativeLedgerCopy(store, digest));
  if (neg && copy === null)
    c.warn(copyFile, 'MISSING_LEDGER_COPY', `${c.rel(copyFile)}: the discoverable copy of ${c.rel(file)} is missing`);
  if (neg && copy && !jsonEqual(neg, copy)) {
    c.error(copyFile, 'LEDGER_MISMATCH', `${c.rel(copyFile)} differs from ${c.rel(file)}`);
    c.error(file, 'LEDGER_MISMATCH', `${c.rel(file)} differs from its copy ${c.rel(copyFile)}`);
  }
  if (!neg && copy)
    c.both(copyFile, file, 'LEDGER_MISMATCH', `${c.rel(copyFile)} is a copy of ${c.rel(file)}, which is missing`);
  const bound = neg ?? copy;
  if (!bound) return;
  const problems =
    c.attempt(c.store.paths.matchedTrials(digest), () => negativeBindingProblems(store, digest, bound, plan)) ?? [];
  for (const p of problems)
    c.error(
      neg ? file : copyFile,
      'NEGATIVE_RESULT_MISMATCH',
      `${c.rel(neg ? file : copyFile)} is not this candidate's own negative result: ${p}`,
    );
}

/**
 * verify: ledgers in negative_result_ledgers/ under names autoctx does not write (upstream's or a person's) must still
 * be valid ledgers.
 */
export function verifyForeignLedgers(c: Findings): void {
  for (const e of c.entries()) {
    if (e.kind === 'file' && c.store.paths.isForeignNegativeLedger(e.path))
      c.attempt(e.path, () => readDocument(c.store.guard, e.path, NEGATIVE_SCHEMA));
  }
}

export const negativeResultCheck: CandidateCheck = {
  order: 600,
  candidate(c, digest, facts) {
    verifyNegativeResult(c, digest, facts.plan);
  },
};

export const foreignLedgersCheck: ScenarioCheck = {
  order: 700,
  scenario(c) {
    verifyForeignLedgers(c);
  },
};
