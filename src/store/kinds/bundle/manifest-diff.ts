import {isAscii} from 'node:buffer';
import {fail} from '../../../errors.js';
import {manifestDiffDigest, type ManifestDiff} from '../../../model/bundle/diff.js';
import {readDocument} from '../../documents.js';
import type {KindContext} from '../common/kind-context.js';
import {diffPrettyJson, manifestDiff, manifestDiffBody, sameDiffBody} from '../../../model/bundle/diff.js';
import {withBytes} from '../../files/fs.js';
import type {Findings} from '../../findings.js';
import type {CandidateCheck} from '../common/kind-steps.js';

/** candidates/<digest>/manifest_diff.json: the candidate against its parent, with its own digest. Immutable. */
export const DIFF_SCHEMA = 'manifest-diff' as const;

export function readManifestDiff(ctx: KindContext, digest: string): ManifestDiff | null {
  return readDocument<ManifestDiff>(ctx.guard, ctx.paths.manifestDiff(digest), DIFF_SCHEMA, (value) => {
    const d = value as unknown as ManifestDiff;
    if (manifestDiffDigest(d) !== d.digest)
      fail('DIGEST_MISMATCH', `manifest diff digest mismatch: recorded ${d.digest}`);
    return d;
  });
}

/** The bytes are exactly the text's UTF-8 (ASCII bytes compared as a string, which is quicker). */
function sameBytes(bytes: Uint8Array, text: string): boolean {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isAscii(buf) ? buf.toString('latin1') === text : buf.equals(Buffer.from(text, 'utf8'));
}

export function writeManifestDiff(ctx: KindContext, diff: ManifestDiff): boolean {
  return ctx.writer.createDocument(ctx.paths.manifestDiff(diff.tested_bundle_digest), DIFF_SCHEMA, diff);
}

/** verify: the stored diff is the candidate's, and its body is the diff recomputed from the two manifests. */
export function verifyManifestDiff(c: Findings, digest: string): ManifestDiff | null | undefined {
  const file = c.store.paths.manifestDiff(digest);
  const bundle = c.bundle(digest);
  // The fast path: the diff recomputed from the manifests, spelled as autoctx writes it, is the file byte for byte.
  const parentOutline = bundle?.parent_digest ? c.bundle(bundle.parent_digest) : undefined;
  if (bundle && parentOutline) {
    const expected = manifestDiff(bundle, parentOutline);
    if (c.attempt(file, () => withBytes(c.store.guard, file, (bytes) => sameBytes(bytes, diffPrettyJson(expected)))))
      return expected;
  }
  const diff = c.attempt(file, () => readManifestDiff(c.store, digest));
  if (diff && bundle) {
    const parent = c.bundle(diff.comparison_bundle_digest);
    if (diff.tested_bundle_digest !== digest)
      c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: names tested bundle ${diff.tested_bundle_digest}`);
    // The stored diff's digest was checked against its body when it was read; its body must be the recomputed one.
    else if (parent && !sameDiffBody(manifestDiffBody(bundle, parent), diff))
      c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: does not equal the diff recomputed from the manifests`);
    else if (!parent)
      c.error(
        file,
        'MISSING_BUNDLE',
        `${c.rel(file)}: comparison bundle ${diff.comparison_bundle_digest} is missing ` +
          `(${c.rel(c.store.paths.bundle(diff.comparison_bundle_digest))})`,
      );
  }
  return diff;
}

declare module '../common/kind-steps.js' {
  interface CandidateFacts {
    diff: ManifestDiff | null | undefined;
  }
}

export const manifestDiffCheck: CandidateCheck = {
  order: 300,
  candidate(c, digest, facts) {
    facts.diff = verifyManifestDiff(c, digest);
  },
};
