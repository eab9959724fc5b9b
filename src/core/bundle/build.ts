import {componentFileName} from '../../store/file-names.js';
import {harnessRuntimeFiles} from '../../model/bundle/harness-runtime.js';
import {fail} from '../../errors.js';
import {createBundle, type ContextBundle} from '../../model/bundle/bundle.js';
import type {BundleSource} from '../../store/index.js';

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
/**
 * Rules for keys of new material only (propose, build, init), never for
 * stored manifests, whose digests must not move: two keys of one kind that
 * are equal after Unicode NFC would materialize as one file on some file
 * systems, and a materialized name `<key>.<ext>` over 255 bytes cannot be
 * written. A key is never normalized or rewritten.
 */
function checkSourceKeys(source: BundleSource): void {
  const seen = new Map<string, string>();
  for (const c of source.components) {
    const name = componentFileName(c.key, c.media_type ?? 'text/plain');
    if (Buffer.byteLength(name, 'utf8') > 255)
      fail(
        'KEY_TOO_LONG',
        `${source.origin}: component ${c.kind}/${c.key.slice(0, 40)}… would be materialized as a file name ` +
          `of ${Buffer.byteLength(name, 'utf8')} bytes, over 255`,
      );
    const id = `${c.kind}\u0000${c.key.normalize('NFC')}`;
    const other = seen.get(id);
    if (other !== undefined && other !== c.key)
      fail(
        'DUPLICATE_COMPONENT',
        `${source.origin}: components ${c.kind}/${JSON.stringify(other)} and ` +
          `${c.kind}/${JSON.stringify(c.key)} have keys that are equal after Unicode NFC normalization`,
      );
    seen.set(id, c.key);
  }
}

export function bundleFromSource(source: BundleSource, fallback: BundleHeader): ContextBundle {
  const header = source.header ?? fallback;
  checkSourceKeys(source);
  const built = createBundle({
    scenario: header.scenario,
    evaluator_epoch: header.evaluator_epoch,
    parent_digest: header.parent_digest,
    components: source.components.map(({kind, key, content, media_type, state}) => ({
      kind,
      key,
      content,
      ...(media_type !== undefined ? {media_type} : {}),
      ...(state !== undefined ? {state} : {}),
    })),
  });
  for (const c of source.components) {
    if (c.digest === undefined) continue;
    const actual = built.components.find((x) => x.kind === c.kind && x.key === c.key)!.digest;
    if (actual !== c.digest)
      fail(
        'DIGEST_MISMATCH',
        `${source.origin}: component digest mismatch for ${c.kind}/${c.key}: recorded ${c.digest}, content ` +
          `hashes to ${actual}`,
      );
  }
  const bundle = built;
  if (source.header?.digest !== undefined && source.header.digest !== bundle.digest) {
    fail(
      'DIGEST_MISMATCH',
      `${source.origin}: manifest digest mismatch: recorded ${source.header.digest}, manifest hashes to ` +
        `${bundle.digest}`,
    );
  }
  // refuses what the Python implementation's store would not save (its keys must be Python identifiers)
  harnessRuntimeFiles(bundle);
  return bundle;
}
