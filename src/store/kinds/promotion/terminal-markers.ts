import {isAutoctxError, rethrowUnless} from '../../../errors.js';
import {jsonEqual} from '../../../canonical/index.js';
import {createCausalAttribution} from '../../../model/evaluation/causal-attribution.js';
import {matchedEvidenceDigest} from '../../../model/evaluation/evidence-digests.js';
import {sortEvidence} from '../../../model/evaluation/trial.js';
import {readDocument} from '../../documents.js';
import type {KindContext} from '../common/kind-context.js';
import type {ManifestDiff} from '../../../model/bundle/diff.js';
import type {Findings} from '../../findings.js';
import type {CandidateCheck, StartCheck} from '../common/kind-steps.js';
import {readBundle} from '../bundle/bundle.js';
import {readEvidence} from '../evaluation/matched-evidence.js';
import {readPlan} from '../evaluation/evaluator-plan.js';
import {readNegativeResult} from './negative-result.js';
import {listPromotionIds, readPromotion} from './history.js';

/** candidates/<digest>/stale_terminalization.json: why a confirmed candidate went stale. Immutable. */
export const STALE_SCHEMA = 'stale-terminalization' as const;
/** candidates/<digest>/causal_attribution.json: a single added component's held-out effect. Immutable. */
export const CAUSAL_SCHEMA = 'causal-attribution' as const;

export function readStaleTerminalization(ctx: KindContext, digest: string): Record<string, unknown> | null {
  return readDocument<Record<string, unknown>>(ctx.guard, ctx.paths.staleTerminalization(digest), STALE_SCHEMA);
}

export function writeStaleTerminalization(ctx: KindContext, digest: string, doc: Record<string, unknown>): boolean {
  return ctx.writer.createDocument(ctx.paths.staleTerminalization(digest), STALE_SCHEMA, doc);
}

export function readCausalAttribution(ctx: KindContext, digest: string): Record<string, unknown> | null {
  return readDocument<Record<string, unknown>>(ctx.guard, ctx.paths.causalAttribution(digest), CAUSAL_SCHEMA);
}

export function writeCausalAttribution(ctx: KindContext, digest: string, doc: Record<string, unknown>): boolean {
  return ctx.writer.createDocument(ctx.paths.causalAttribution(digest), CAUSAL_SCHEMA, doc);
}

/**
 * verify: a stale marker or causal attribution names its own candidate, and an attribution's diff is the candidate's.
 */
export function verifyMarkers(
  c: Findings,
  digest: string,
  diff: ManifestDiff | null | undefined,
  promoted: ReadonlySet<string>,
): void {
  for (const [file, schema] of [
    [c.store.paths.staleTerminalization(digest), STALE_SCHEMA],
    [c.store.paths.causalAttribution(digest), CAUSAL_SCHEMA],
  ] as const) {
    c.attempt(file, () =>
      readDocument(c.store.guard, file, schema, (v) => {
        const doc = v as unknown as {candidate_digest: string; manifest_diff?: ManifestDiff};
        if (doc.candidate_digest !== digest)
          c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: names candidate ${doc.candidate_digest}`);
        if (doc.manifest_diff && diff && doc.manifest_diff.digest !== diff.digest)
          c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: its manifest diff is not the candidate's`);
        return doc;
      }),
    );
  }
  // Whether each marker is there, asked once (of the walk) for both checks below.
  const there = {
    stale: c.store.guard.present(c.store.paths.staleTerminalization(digest)),
    causal: c.store.guard.present(c.store.paths.causalAttribution(digest)),
  };
  verifyMarkersPresent(c, digest, diff, promoted, there);
  verifyMarkerContents(c, digest, diff, there);
}

/** Which of a candidate's two markers are there. */
interface MarkersThere {
  stale: boolean;
  causal: boolean;
}

/**
 * The causal attribution its candidate's files make, or null when they make none (or are not there to make it from).
 */
function expectedAttribution(c: Findings, digest: string, diff: ManifestDiff): Record<string, unknown> | null {
  const {store} = c;
  return (
    c.attempt(store.paths.causalAttribution(digest), () => {
      const tested = readBundle(store, digest);
      const parent = tested?.parent_digest ? readBundle(store, tested.parent_digest) : null;
      const evidence = readEvidence(store, digest);
      return tested && parent && evidence ? createCausalAttribution(tested, parent, diff, evidence.trials) : null;
    }) ?? null
  );
}

/**
 * verify: every field of a marker is what its candidate's files make: the causal attribution is the
 * one they compute, and the stale marker's parent, plan, evidence and reason are the candidate's own
 * and its negative result's (whose reason names the bundle that was active).
 */
function verifyMarkerContents(
  c: Findings,
  digest: string,
  diff: ManifestDiff | null | undefined,
  there: MarkersThere,
): void {
  const {store} = c;
  const causal = store.paths.causalAttribution(digest);
  if (there.causal && diff) {
    const stored = c.attempt(causal, () => readDocument(store.guard, causal, CAUSAL_SCHEMA));
    const made = expectedAttribution(c, digest, diff);
    if (stored && !jsonEqual(stored, made))
      c.error(
        causal,
        'DIGEST_MISMATCH',
        `${c.rel(causal)} is not the causal attribution the candidate's bundle, parent and evidence make`,
      );
  }
  const stale = store.paths.staleTerminalization(digest);
  if (!there.stale) return;
  const doc = c.attempt(stale, () => readDocument(store.guard, stale, STALE_SCHEMA)) as Record<string, unknown> | null;
  if (!doc) return;
  c.attempt(stale, () => {
    const bundle = readBundle(store, digest);
    const plan = readPlan(store, digest);
    const evidence = readEvidence(store, digest);
    const neg = readNegativeResult(store, digest) as {entries?: Array<{reason?: unknown}>} | null;
    const evidenceDigest =
      evidence && evidence.confirmation_policy
        ? matchedEvidenceDigest({
            trials: sortEvidence(evidence.trials),
            confirmation_policy: evidence.confirmation_policy,
            confirmation_policy_digest: evidence.confirmation_policy_digest,
          })
        : null;
    const wrong: string[] = [];
    if (bundle && doc.parent_digest !== bundle.parent_digest) wrong.push('parent_digest');
    if (doc.evaluator_plan_digest !== (plan?.plan_digest ?? null)) wrong.push('evaluator_plan_digest');
    if (doc.matched_evidence_digest !== evidenceDigest) wrong.push('matched_evidence_digest');
    if (
      doc.reason !==
      `confirmed candidate incumbent ${String(doc.parent_digest)} is stale; active bundle is ` +
        `${String(doc.observed_active_digest)}`
    )
      wrong.push('reason');
    if (neg && !(neg.entries ?? []).some((e) => e.reason === doc.reason))
      wrong.push('reason (its negative result gives another)');
    if (wrong.length > 0)
      c.error(stale, 'DIGEST_MISMATCH', `${c.rel(stale)}: ${wrong.join(', ')} not the candidate's own`);
    return null;
  });
}

/**
 * verify: a marker its candidate's other files require is there. A stale rejection (its negative
 * result's entry is `…-stale-incumbent`) was written with its stale marker; a promoted candidate
 * whose diff adds one component, with held-out trials, was promoted with its causal attribution.
 */
function verifyMarkersPresent(
  c: Findings,
  digest: string,
  diff: ManifestDiff | null | undefined,
  promoted: ReadonlySet<string>,
  there: MarkersThere,
): void {
  const {store} = c;
  const stale = store.paths.staleTerminalization(digest);
  if (!there.stale) {
    const neg = c.attempt(store.paths.negativeResult(digest), () => readNegativeResult(store, digest)) as {
      entries?: Array<{result_id?: unknown}>;
    } | null;
    if (neg?.entries?.some((e) => typeof e.result_id === 'string' && e.result_id.endsWith('-stale-incumbent'))) {
      c.error(
        stale,
        'MISSING_MARKER',
        `${c.rel(stale)} is missing: ${c.rel(store.paths.negativeResult(digest))} rejects the candidate as ` +
          `stale, which is recorded with it`,
      );
    }
  }
  const causal = store.paths.causalAttribution(digest);
  if (there.causal || !diff || !promoted.has(digest)) return;
  if (expectedAttribution(c, digest, diff))
    c.error(
      causal,
      'MISSING_MARKER',
      `${c.rel(causal)} is missing: the candidate was promoted adding one component, with held-out trials, ` +
        `which records its causal attribution`,
    );
}

/**
 * The candidates some promotion record names, each record read once for the scenario (not once per candidate). An
 * unreadable promotion record is its own check's finding, not this one's: it names no candidate here.
 */
export function promotedCandidates(ctx: KindContext): Set<string> {
  const named = new Set<string>();
  let ids: string[] = [];
  try {
    ids = listPromotionIds(ctx);
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
  }
  for (const id of ids) {
    try {
      const digest = readPromotion(ctx, id)?.candidate_digest;
      if (typeof digest === 'string') named.add(digest);
    } catch (error) {
      rethrowUnless(error, isAutoctxError);
    }
  }
  return named;
}

declare module '../common/kind-steps.js' {
  interface ScenarioFacts {
    /** The candidates a promotion record names. */
    promoted: ReadonlySet<string>;
  }
}

export const promotedCheck: StartCheck = {
  order: 200,
  start(c, facts) {
    facts.promoted = promotedCandidates(c.store);
  },
};

export const markersCheck: CandidateCheck = {
  order: 700,
  candidate(c, digest, facts, scenario) {
    verifyMarkers(c, digest, facts.diff, scenario.promoted ?? promotedCandidates(c.store));
  },
};
