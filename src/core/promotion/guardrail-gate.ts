import {jsonEqual} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {planBindingDigest, type BoundPlan} from '../../model/evaluation/evaluator-plan.js';
import type {PairObservation} from '../../model/evaluation/observations.js';
import {sortEvidence, type MatchedTrial} from '../../model/evaluation/trial.js';
import {
  guardrailRecord,
  verdictLine,
  type GuardrailRecord,
  type GuardrailVerdict,
} from '../../model/promotion/guardrails.js';
import type {KindContext} from '../../store/kinds/common/kind-context.js';
import type {Findings} from '../../store/findings.js';
import type {CandidateCheck} from '../../store/kinds/common/kind-steps.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';
import {readEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import {readTrialObservations} from '../../store/kinds/evaluation/trial-observations.js';
import {readPromotionGuardrails} from '../../store/kinds/promotion/promotion-guardrails.js';

/** What the evaluator observed of each recorded pair (trial_observations.json), or null when nothing was kept. */
export type Observations = ReadonlyMap<string, PairObservation> | null;

/**
 * The promotion guardrails' record for a candidate: its plan's guardrails over every pair its decision used (the
 * recorded trials), from what was observed of each. Null when the plan binds no guardrail.
 */
export function computeGuardrails(
  candidate: string,
  incumbent: string,
  plan: BoundPlan | null,
  trials: readonly MatchedTrial[],
  observations: Observations,
): GuardrailRecord | null {
  const guardrails = plan?.additions.guardrails ?? [];
  if (!plan || guardrails.length === 0) return null;
  return guardrailRecord({
    candidate_digest: candidate,
    incumbent_digest: incumbent,
    plan_binding_digest: planBindingDigest(plan),
    guardrails,
    pairs: sortEvidence(trials).map((t) => ({pair_key: t.pair_key, observed: observations?.get(t.pair_key) ?? null})),
  });
}

/** The record the candidate's stored files make now (null: no guardrail bound, or nothing to compute it from). */
export function guardrailsFromTree(store: KindContext, digest: string): GuardrailRecord | null {
  const plan = readPlan(store, digest);
  if (!plan?.additions.guardrails?.length) return null; // the common case, found from the plan alone
  const bundle = readBundle(store, digest);
  const evidence = readEvidence(store, digest);
  if (!bundle?.parent_digest || !evidence) return null;
  return computeGuardrails(digest, bundle.parent_digest, plan, evidence.trials, readTrialObservations(store, digest));
}

/**
 * The gate before promotion: every guardrail must pass. A failed one refuses (GUARDRAIL_FAILED), and so does one
 * that could not be measured on every pair (GUARDRAIL_UNMEASURED: it fails closed); exit 3, nothing written.
 */
export function requireGuardrails(record: GuardrailRecord | null): void {
  if (!record || record.passed) return;
  const failed = record.guardrails.filter((v) => v.verdict === 'fail');
  const held = failed.length > 0 ? failed : record.guardrails.filter((v) => v.verdict !== 'pass');
  fail(
    failed.length > 0 ? 'GUARDRAIL_FAILED' : 'GUARDRAIL_UNMEASURED',
    `promotion guardrail ${held.map(verdictLine).join('; ')}; the candidate stays confirmed and nothing changed` +
      (failed.length > 0 ? '' : ' (the evaluator must report the metric for both arms of every pair)'),
    {guardrails: record.guardrails},
  );
}

/** A guardrail record's replay: the stored one against the one the tree makes now. */
export interface GuardrailReplay {
  /** no_observations: trial_observations.json is gone (which is allowed), so the verdicts cannot be computed again. */
  status: 'ok' | 'mismatch' | 'no_observations';
  recorded: GuardrailRecord;
  replayed: GuardrailRecord | null;
}

/** Replay the stored promotion guardrails of a candidate (null when it has none). */
export function replayGuardrails(store: KindContext, digest: string): GuardrailReplay | null {
  const recorded = readPromotionGuardrails(store, digest);
  if (!recorded) return null;
  if (readTrialObservations(store, digest) === null) return {status: 'no_observations', recorded, replayed: null};
  const replayed = guardrailsFromTree(store, digest);
  return {status: replayed && jsonEqual(recorded, replayed) ? 'ok' : 'mismatch', recorded, replayed};
}

/** What a record says without the observations: its plan, pairs and guardrails (not their values or verdicts). */
const frameOf = (r: GuardrailRecord) => ({
  ...r,
  observations_digest: null,
  passed: null,
  guardrails: r.guardrails.map((v) => ({guardrail: v.guardrail, pairs: v.pairs})),
});

/** Whether a stored record is one promote writes: every guardrail measured on every pair and within its limit. */
const allPassed = (r: GuardrailRecord) =>
  r.passed &&
  r.guardrails.every(
    (v) => v.verdict === 'pass' && v.missing_pairs === 0 && v.candidate !== null && v.limit !== null,
  ) &&
  r.guardrails.every((v) => v.candidate! <= v.limit!);

/** The first field in which a stored record differs from the one its tree makes, and what the tree makes there. */
function firstDifference(stored: object, made: object, lines: readonly string[]): string {
  const a = stored as Record<string, unknown>;
  const b = made as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (jsonEqual(a[key], b[key])) continue;
    if (key !== 'guardrails') return `${key} differs`;
    const mine = (a[key] ?? []) as unknown[];
    const i = (b[key] as unknown[]).findIndex((v, n) => !jsonEqual(v, mine[n]));
    return `guardrails[${i}] differs${lines[i] ? ` (the tree makes ${lines[i]})` : ''}`;
  }
  return 'nothing differs';
}

/** Why a stored record is not the one its tree makes (null: it is). */
function guardrailsProblem(stored: GuardrailRecord, made: GuardrailRecord | null, observed: boolean): string | null {
  if (!made) return 'the plan binds no guardrail (or the evidence is gone)';
  if (!allPassed(stored)) return 'it records a guardrail that did not pass';
  if (observed) return jsonEqual(stored, made) ? null : firstDifference(stored, made, made.guardrails.map(verdictLine));
  return jsonEqual(frameOf(stored), frameOf(made)) ? null : firstDifference(frameOf(stored), frameOf(made), []);
}

/**
 * verify: promotion_guardrails.json is what the plan's guardrails make of the evidence and trial_observations.json,
 * bit for bit (when trial_observations.json is gone, which is allowed, what can be checked without it: the plan, the
 * pairs, and that every guardrail passed); and a promoted candidate whose plan binds guardrails has it.
 */
function verifyGuardrails(c: Findings, digest: string, promoted: boolean): void {
  const {store} = c;
  const file = store.paths.promotionGuardrails(digest);
  const present = store.guard.present(file);
  c.attempt(file, () => {
    const stored = present ? readPromotionGuardrails(store, digest) : null;
    if (!stored) {
      if (promoted && (readPlan(store, digest)?.additions.guardrails?.length ?? 0) > 0)
        c.error(
          file,
          'MISSING_MARKER',
          `${c.rel(file)} is missing: the candidate was promoted under a plan with guardrails, whose verdicts ` +
            `are recorded with the promotion`,
        );
      return null;
    }
    const observed = readTrialObservations(store, digest) !== null;
    const problem = guardrailsProblem(stored, guardrailsFromTree(store, digest), observed);
    if (problem)
      c.error(
        file,
        'REPLAY_MISMATCH',
        `${c.rel(file)} is not what the plan's guardrails make of the evidence` +
          `${observed ? ` and ${c.rel(store.paths.trialObservations(digest))}` : ''}: ${problem}`,
      );
    return null;
  });
}

export const guardrailsCheck: CandidateCheck = {
  order: 750,
  candidate(c, digest, _facts, scenario) {
    verifyGuardrails(c, digest, scenario.promoted?.has(digest) ?? false);
  },
};

/**
 * What status shows of a candidate's guardrails: the verdicts recorded with its promotion, or else what the gate would
 * answer now (null: its plan binds none).
 */
export function guardrailVerdicts(store: KindContext, digest: string): GuardrailVerdict[] | null {
  return (readPromotionGuardrails(store, digest) ?? guardrailsFromTree(store, digest))?.guardrails ?? null;
}
