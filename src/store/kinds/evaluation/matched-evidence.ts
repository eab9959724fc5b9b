import {fail} from '../../../errors.js';
import {
  confirmationPolicyDigest,
  validateConfirmationPolicy,
  type ConfirmationPolicy,
} from '../../../model/evaluation/policy.js';
import {matchedTrialFromDict, sortEvidence, type MatchedTrial} from '../../../model/evaluation/trial.js';
import {readDocument} from '../../documents.js';
import type {KindContext} from '../common/kind-context.js';
import {legacyPairKey, matchedTrialPairKey} from '../../../model/evaluation/trial.js';
import {checkPolicy, type Findings} from '../../findings.js';
import {readEvidenceSeal, sealProblem, verifySeal, type StoredSeal} from './evidence-seal.js';
import type {ComparisonSubject} from '../../../model/evaluation/comparison.js';
import type {CandidateRecord} from '../../../model/promotion/records.js';
import type {BoundPlan} from '../../../model/evaluation/evaluator-plan.js';
import {stoppingRuleProblems, trialPlanProblems} from '../../../model/evaluation/plan-binding.js';
import {predatesHistories, readAdoption} from '../promotion/history-adoption.js';
import {planCampaign} from './campaign-ledger.js';
import type {CandidateCheck} from '../common/kind-steps.js';

/** candidates/<digest>/matched_trials.json: the schema-2 envelope, or the legacy (schema-1) array. */
export const EVIDENCE_SCHEMAS = ['matched-trials', 'matched-trials-legacy'] as const;

/** A candidate's recorded evidence. A legacy (schema-1) array has no bound policy. */
export interface MatchedEvidence {
  legacy: boolean;
  trials: MatchedTrial[];
  confirmation_policy: ConfirmationPolicy | null;
  confirmation_policy_digest: string | null;
}

function uniquePairs(trials: readonly MatchedTrial[], message: string): void {
  const keys = new Set<string>();
  for (const t of trials) {
    if (keys.has(t.pair_key)) fail('INVALID_INPUT', message);
    keys.add(t.pair_key);
  }
}

export function readEvidence(ctx: KindContext, digest: string): MatchedEvidence | null {
  return readDocument<MatchedEvidence>(ctx.guard, ctx.paths.matchedTrials(digest), [...EVIDENCE_SCHEMAS], (value) => {
    if (Array.isArray(value)) {
      const trials = value.map((row) => matchedTrialFromDict(row, {allowLegacyKey: true}));
      uniquePairs(trials, 'legacy rows collapse to a duplicate current pair identity');
      return {legacy: true, trials, confirmation_policy: null, confirmation_policy_digest: null};
    }
    const doc = value as unknown as {
      trials: unknown[];
      confirmation_policy: ConfirmationPolicy;
      confirmation_policy_digest: string;
    };
    const policy = validateConfirmationPolicy(doc.confirmation_policy);
    if (confirmationPolicyDigest(policy) !== doc.confirmation_policy_digest)
      fail('DIGEST_MISMATCH', 'confirmation_policy_digest does not match the policy');
    const trials = doc.trials.map((row) => matchedTrialFromDict(row));
    for (const t of trials)
      if (t.candidate_digest !== digest) fail('INVALID_INPUT', `a trial is for candidate ${t.candidate_digest}`);
    uniquePairs(trials, 'duplicate matched trial pair');
    return {
      legacy: false,
      trials,
      confirmation_policy: policy,
      confirmation_policy_digest: doc.confirmation_policy_digest,
    };
  });
}

/** Replace the envelope atomically: trials sorted by (lane, pair_key), with the policy and its digest. */
export function writeEvidence(
  ctx: KindContext,
  digest: string,
  trials: readonly MatchedTrial[],
  policy: ConfirmationPolicy,
): void {
  const envelope = {
    schema_version: 2,
    trials: sortEvidence(trials),
    confirmation_policy: policy,
    confirmation_policy_digest: confirmationPolicyDigest(policy),
  };
  ctx.writer.replaceDocument(ctx.paths.matchedTrials(digest), 'matched-trials', envelope);
}

interface TrialRow {
  candidate_digest: string;
  evaluator_epoch: string;
  cohort: string;
  fixture: string;
  fixture_digest: string;
  lane: string;
  seed: number;
  pair_key: string;
}

/** What verify found of a candidate's evidence, for the checks of the files beside it. */
export interface EvidenceFacts {
  legacy: boolean;
  trials: number;
  /** The pair keys the evidence records, as written. */
  pairKeys: ReadonlySet<string>;
  /** The seal as read (null: absent; undefined: refused). */
  seal: StoredSeal | null | undefined;
}

/**
 * verify: every trial's pair key is its identity's, no pair twice, every
 * trial for this candidate, the policy matches its digest; then the seal,
 * the plan binding and the stopping rule. Read row by row (not through
 * readEvidence) so that every problem is named. `plan` is the plan as verify
 * read it (null: absent; undefined: refused).
 */
export function verifyEvidence(
  c: Findings,
  digest: string,
  plan: BoundPlan | null | undefined,
  record: CandidateRecord | null | undefined,
  predating = false,
): EvidenceFacts | null | undefined {
  const file = c.store.paths.matchedTrials(digest);
  let facts: EvidenceFacts | null = null;
  const read = c.attempt(file, () =>
    readDocument(c.store.guard, file, [...EVIDENCE_SCHEMAS], (v) => {
      const legacy = Array.isArray(v);
      const doc = v as unknown as {
        trials: TrialRow[];
        confirmation_policy: ConfirmationPolicy;
        confirmation_policy_digest: string;
      };
      const trials = legacy ? (v as unknown as TrialRow[]) : doc.trials;
      facts = {legacy, trials: trials.length, pairKeys: new Set(trials.map((t) => t.pair_key)), seal: null};
      if (!legacy) checkPolicy(c, file, doc.confirmation_policy, doc.confirmation_policy_digest);
      const seen = new Set<string>();
      let sound = true;
      for (const [i, t] of trials.entries()) {
        const key = matchedTrialPairKey(t);
        if (t.pair_key !== key && !(legacy && t.pair_key === legacyPairKey(t)))
          c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: trial ${i} pair_key does not match its identity`);
        if (seen.has(key)) c.error(file, 'DUPLICATE_PAIR', `${c.rel(file)}: trial ${i} duplicates matched pair ${key}`);
        if (t.pair_key !== key || seen.has(key)) sound = false;
        seen.add(key);
        if (t.candidate_digest !== digest)
          c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: trial ${i} is for candidate ${t.candidate_digest}`);
      }
      if (!legacy) {
        const rows = trials as unknown as MatchedTrial[];
        facts.seal = verifySeal(c, digest, rows, plan);
        if (facts.seal && record?.comparison) verifySealedDecision(c, digest, rows, facts.seal, record);
        if (trials.length > 0 && plan !== undefined && !(plan === null && predating))
          verifyPlanned(c, digest, rows, plan, sound ? doc.confirmation_policy : null);
      }
      return v;
    }),
  );
  return read === undefined ? (facts === null ? undefined : facts) : read === null ? null : facts;
}

/** verify: a record decides only on sealed trials (runs seal each pair before the record that counts it). */
function verifySealedDecision(
  c: Findings,
  digest: string,
  trials: MatchedTrial[],
  seal: StoredSeal,
  record: CandidateRecord,
): void {
  const comparison = record.comparison!;
  const decidedOn = comparison.screen_pairs + comparison.confirmation_pairs + comparison.heldout_pairs;
  const sealed = trials.filter((t) => seal.trial_digests[t.pair_key] !== undefined).length;
  if (decidedOn > sealed) {
    const recordFile = c.store.paths.record(digest);
    c.both(
      recordFile,
      c.store.paths.evidenceSeal(digest),
      'UNSEALED_DECISION',
      `${c.rel(recordFile)} decided on ${decidedOn} pairs, but ` +
        `${c.rel(c.store.paths.evidenceSeal(digest))} seals only ${sealed}: the decision was not made by a ` +
        `run`,
    );
  }
}

/**
 * verify: recorded trials are what a run of the bound plan records (each a
 * unit of it, in plan order within its lane, no more than the stopping rule
 * lets a run record), and evidence has its plan.
 */
function verifyPlanned(
  c: Findings,
  digest: string,
  trials: MatchedTrial[],
  plan: BoundPlan | null,
  policy: ConfirmationPolicy | null,
): void {
  const file = c.store.paths.matchedTrials(digest);
  const planFile = c.store.paths.evaluatorPlan(digest);
  if (plan === null)
    return c.both(
      file,
      planFile,
      'MISSING_PLAN',
      `${c.rel(file)} records trials, but ${c.rel(planFile)}, the plan they were recorded under, is missing`,
    );
  let problems = trialPlanProblems(plan, trials);
  const subject = c.bundle(digest);
  if (problems.length === 0 && policy && subject) {
    const stopped = c.attempt(file, () =>
      stoppingRuleProblems(subject, plan, trials, policy, planCampaign(c.store, plan) !== null),
    );
    problems = stopped ?? [];
  }
  const shown = problems.slice(0, 5);
  for (const problem of shown)
    c.both(file, planFile, 'TRIAL_NOT_PLANNED', `${c.rel(file)}: ${problem} (${c.rel(planFile)})`);
  if (problems.length > shown.length)
    c.both(
      file,
      planFile,
      'TRIAL_NOT_PLANNED',
      `${c.rel(file)}: ${problems.length - shown.length} more trials disagree with ${c.rel(planFile)}`,
    );
}

/**
 * Why recorded evidence is not what autoctx could have produced, for every
 * command that acts on it (null: it is acceptable): its seal holds, under the
 * plan bound now; a decided record has its seal (unless the plan is exactly
 * the Python implementation's, which seals nothing); every trial is a unit of
 * the plan, in plan order, and no more than the stopping rule lets a run record.
 */
export function evidenceProblem(
  ctx: KindContext,
  subject: ComparisonSubject,
  evidence: MatchedEvidence,
  plan: BoundPlan | null,
  record: CandidateRecord | null,
): string | null {
  if (evidence.legacy || evidence.trials.length === 0) return null;
  const digest = subject.digest;
  // The Python implementation's first store bound no plans: its candidates are checked by their seal (if autoctx
  // migrated them) and replay.
  if (!plan)
    return predatesHistories(readAdoption(ctx), digest)
      ? sealProblem(ctx, digest, evidence.trials, null)
      : `candidate ${digest} has matched trials but no evaluator_plan.json they were recorded under`;
  const sealed = sealProblem(ctx, digest, evidence.trials, plan);
  if (sealed) return sealed;
  const seal = readEvidenceSeal(ctx, digest);
  if (record?.comparison && !plan.upstream && seal === null)
    return (
      `candidate ${digest} holds a decision, but evidence_seal.json, the seal of the trials it was decided ` +
      `from, is missing`
    );
  if (record?.comparison && seal) {
    const c = record.comparison;
    const sealedCount = evidence.trials.filter((t) => seal.trial_digests[t.pair_key] !== undefined).length;
    if (c.screen_pairs + c.confirmation_pairs + c.heldout_pairs > sealedCount)
      return (
        `the record of ${digest} decided on more pairs than evidence_seal.json seals: the decision was not ` +
        `made by a run`
      );
  }
  const unplanned = trialPlanProblems(plan, evidence.trials);
  const problems =
    unplanned.length > 0
      ? unplanned
      : stoppingRuleProblems(
          subject,
          plan,
          evidence.trials,
          evidence.confirmation_policy!,
          planCampaign(ctx, plan) !== null,
        );
  if (problems.length === 0) return null;
  return (
    `the recorded trials of ${digest} are not what a run of the bound plan records: ` +
    `${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`
  );
}

declare module '../common/kind-steps.js' {
  interface CandidateFacts {
    evidence: EvidenceFacts | null | undefined;
  }
}

export const evidenceCheck: CandidateCheck = {
  order: 500,
  candidate(c, digest, facts) {
    facts.evidence = verifyEvidence(c, digest, facts.plan, facts.record, facts.predating);
  },
};
