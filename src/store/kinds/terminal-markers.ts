import {createCausalAttribution} from '../../model/causal-attribution.js';
import {readDocument} from '../documents.js';
import {exists} from '../fs.js';
import type {KindContext} from './context.js';
import type {ManifestDiff} from '../../model/diff.js';
import type {Findings} from '../findings.js';

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

/** verify: a stale marker or causal attribution names its own candidate, and an attribution's diff is the candidate's. */
export function verifyMarkers(c: Findings, digest: string, diff: ManifestDiff | null | undefined): void {
  for (const [file, schema] of [
    [c.store.paths.staleTerminalization(digest), STALE_SCHEMA],
    [c.store.paths.causalAttribution(digest), CAUSAL_SCHEMA],
  ] as const) {
    c.attempt(file, () =>
      c.store.readDocumentAt(file, schema, (v) => {
        const doc = v as unknown as {candidate_digest: string; manifest_diff?: ManifestDiff};
        if (doc.candidate_digest !== digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: names candidate ${doc.candidate_digest}`);
        if (doc.manifest_diff && diff && doc.manifest_diff.digest !== diff.digest) c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: its manifest diff is not the candidate's`);
        return doc;
      }),
    );
  }
  verifyMarkersPresent(c, digest, diff);
}

/**
 * verify: a marker its candidate's other files require is there. A stale rejection (its negative
 * result's entry is `…-stale-incumbent`) was written with its stale marker; a promoted candidate
 * whose diff adds one component, with held-out trials, was promoted with its causal attribution.
 */
function verifyMarkersPresent(c: Findings, digest: string, diff: ManifestDiff | null | undefined): void {
  const {store} = c;
  const stale = store.paths.staleTerminalization(digest);
  if (!exists(stale)) {
    const neg = c.attempt(store.paths.negativeResult(digest), () => store.readNegativeResult(digest)) as {entries?: Array<{result_id?: unknown}>} | null;
    if (neg?.entries?.some((e) => typeof e.result_id === 'string' && e.result_id.endsWith('-stale-incumbent'))) {
      c.error(stale, 'MISSING_MARKER', `${c.rel(stale)} is missing: ${c.rel(store.paths.negativeResult(digest))} rejects the candidate as stale, which is recorded with it`);
    }
  }
  const causal = store.paths.causalAttribution(digest);
  if (exists(causal) || !diff) return;
  const promotion = c.attempt(store.paths.promotionsDir, () => store.listPromotionIds().some((id) => store.readPromotion(id)?.candidate_digest === digest));
  if (!promotion) return;
  const made = c.attempt(causal, () => {
    const tested = store.readBundle(digest);
    const parent = tested?.parent_digest ? store.readBundle(tested.parent_digest) : null;
    const evidence = store.readEvidence(digest);
    return tested && parent && evidence ? createCausalAttribution(tested, parent, diff, evidence.trials) : null;
  });
  if (made) c.error(causal, 'MISSING_MARKER', `${c.rel(causal)} is missing: the candidate was promoted adding one component, with held-out trials, which records its causal attribution`);
}
