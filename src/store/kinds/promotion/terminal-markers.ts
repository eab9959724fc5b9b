import {readDocument} from '../../documents.js';
import type {KindContext} from '../common/kind-context.js';
import type {ManifestDiff} from '../../../model/bundle/diff.js';
import type {Findings} from '../../findings.js';
import type {CandidateCheck} from '../common/kind-steps.js';

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
      readDocument(c.store.guard, file, schema, (v) => {
        const doc = v as unknown as {candidate_digest: string; manifest_diff?: ManifestDiff};
        if (doc.candidate_digest !== digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: names candidate ${doc.candidate_digest}`);
        if (doc.manifest_diff && diff && doc.manifest_diff.digest !== diff.digest) c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: its manifest diff is not the candidate's`);
        return doc;
      }),
    );
  }
}

export const markersCheck: CandidateCheck = {
  order: 700,
  candidate(c, digest, facts) {
    verifyMarkers(c, digest, facts.diff);
  },
};
