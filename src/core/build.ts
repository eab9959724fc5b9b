import {fail} from '../errors.js';
import {createBundle, type ContextBundle} from '../model/bundle.js';
import {componentDigest} from '../model/component.js';
import type {BundleSource} from '../store/index.js';

export interface BundleHeader {
  scenario: string;
  evaluator_epoch: string;
  parent_digest: string | null;
}

/**
 * Check the digests a manifest-shaped source carries, against its own header,
 * before anything else is read from it: a forged digest is reported as such.
 */
export function verifySourceDigests(source: BundleSource): void {
  if (source.header) bundleFromSource(source, source.header);
  else bundleFromSource(source, {scenario: 'source', evaluator_epoch: 'source', parent_digest: null});
}

/**
 * Turn SRC material into a bundle. For a manifest-shaped JSON the header comes
 * from the file and any digests it carries must be right; for a folder it
 * comes from `fallback`.
 */
export function bundleFromSource(source: BundleSource, fallback: BundleHeader): ContextBundle {
  const header = source.header ?? fallback;
  for (const c of source.components) {
    if (c.digest === undefined) continue;
    const actual = componentDigest({kind: c.kind, key: c.key, content: c.content, media_type: c.media_type ?? 'text/plain'});
    if (actual !== c.digest) fail('DIGEST_MISMATCH', `${source.origin}: component digest mismatch for ${c.kind}/${c.key}: recorded ${c.digest}, content hashes to ${actual}`);
  }
  const bundle = createBundle({
    scenario: header.scenario,
    evaluator_epoch: header.evaluator_epoch,
    parent_digest: header.parent_digest,
    components: source.components.map(({kind, key, content, media_type}) => ({kind, key, content, ...(media_type !== undefined ? {media_type} : {})})),
  });
  if (source.header?.digest !== undefined && source.header.digest !== bundle.digest) {
    fail('DIGEST_MISMATCH', `${source.origin}: manifest digest mismatch: recorded ${source.header.digest}, manifest hashes to ${bundle.digest}`);
  }
  return bundle;
}
