import {compareUtf16, sha256Hex, stableDigest} from '../../canonical/index.js';
import {compareComponents, type ContextBundle} from './bundle.js';
import {type BundleComponent} from './component.js';

export const MANIFEST_DIFF_SCHEMA_VERSION = 1;

export interface ManifestChange {
  component_kind: string;
  component_key: string;
  tested_component_digest: string | null;
  comparison_component_digest: string | null;
}

export interface ManifestDiff {
  schema_version: 1;
  tested_bundle_digest: string;
  comparison_bundle_digest: string;
  evaluator_epoch: string;
  changes: ManifestChange[];
  digest: string;
}

/** What a diff reads of a bundle: its identity and its components' digests, not their texts. */
export type DiffSide = Pick<ContextBundle, 'digest' | 'evaluator_epoch'> & {
  components: ReadonlyArray<Pick<BundleComponent, 'kind' | 'key' | 'digest'>>;
};

/**
 * The component-level difference of `tested` against `comparison`: the union
 * of (kind, key) in UTF-16 order, skipping components with equal digests; null
 * means absent on that side.
 */
export function manifestDiff(tested: DiffSide, comparison: DiffSide): ManifestDiff {
  const body = manifestDiffBody(tested, comparison);
  return {...body, digest: sha256Hex(diffCanonicalJson(body))};
}

/** A string's JSON spelling: most keys and epochs need no escaping, and JSON.stringify of each is the cost to skip. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** Spellings by string: the bundles of a scenario repeat their kinds and keys (verify spells each diff twice). */
const spellings = new Map<string, string>();
function str(s: string): string {
  let spelled = spellings.get(s);
  if (spelled === undefined) {
    spelled = PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
    if (spellings.size >= 4096) spellings.clear();
    spellings.set(s, spelled);
  }
  return spelled;
}
const digestOrNull = (d: string | null) => (d === null ? 'null' : `"${d}"`);

/**
 * canonicalJson of a diff body, written out for its one shape (a diff is
 * written, and verified, once per candidate; the general encoder costs four
 * times as much here). Its strings are a bundle's, so they are well formed;
 * its digests are 64 lowercase hex. A test holds it equal to canonicalJson.
 */
export function diffCanonicalJson(body: Omit<ManifestDiff, 'digest'>): string {
  let s = '{"changes":[';
  for (let i = 0; i < body.changes.length; i++) {
    const c = body.changes[i]!;
    // Split only where a value goes in: each piece of constant text is one literal.
    s +=
      (i === 0 ? '{"comparison_component_digest":' : ',{"comparison_component_digest":') +
      digestOrNull(c.comparison_component_digest) +
      ',"component_key":' +
      str(c.component_key) +
      ',"component_kind":' +
      str(c.component_kind) +
      ',"tested_component_digest":' +
      digestOrNull(c.tested_component_digest) +
      '}';
  }
  return (
    `${s}],"comparison_bundle_digest":"${body.comparison_bundle_digest}","evaluator_epoch":` +
    `${str(body.evaluator_epoch)},"schema_version":${body.schema_version},"tested_bundle_digest":"` +
    `${body.tested_bundle_digest}"}`
  );
}

/**
 * prettyJson of a diff, written out for its one shape (verify compares a stored diff's bytes with it). A test holds it
 * equal.
 */
export function diffPrettyJson(diff: ManifestDiff): string {
  let s = '{\n  "changes": [';
  for (let i = 0; i < diff.changes.length; i++) {
    const c = diff.changes[i]!;
    s +=
      (i === 0 ? '\n    {\n      "comparison_component_digest": ' : ',\n    {\n      "comparison_component_digest": ') +
      digestOrNull(c.comparison_component_digest) +
      ',\n      "component_key": ' +
      str(c.component_key) +
      ',\n      "component_kind": ' +
      str(c.component_kind) +
      ',\n      "tested_component_digest": ' +
      digestOrNull(c.tested_component_digest) +
      '\n    }';
  }
  s += diff.changes.length === 0 ? ']' : '\n  ]';
  return (
    `${s},\n  "comparison_bundle_digest": "${diff.comparison_bundle_digest}",\n  "digest": ` +
    `"${diff.digest}",\n  "evaluator_epoch": ${str(diff.evaluator_epoch)},\n  "schema_version": ` +
    `${diff.schema_version},\n  "tested_bundle_digest": "${diff.tested_bundle_digest}"\n}\n`
  );
}

/** True when a stored diff has exactly the body recomputed from the manifests (no hashing needed). */
export function sameDiffBody(body: Omit<ManifestDiff, 'digest'>, stored: ManifestDiff): boolean {
  const same = (a: ManifestChange, b: ManifestChange) =>
    a.component_kind === b.component_kind &&
    a.component_key === b.component_key &&
    a.tested_component_digest === b.tested_component_digest &&
    a.comparison_component_digest === b.comparison_component_digest;
  return (
    body.schema_version === stored.schema_version &&
    body.tested_bundle_digest === stored.tested_bundle_digest &&
    body.comparison_bundle_digest === stored.comparison_bundle_digest &&
    body.evaluator_epoch === stored.evaluator_epoch &&
    body.changes.length === stored.changes.length &&
    body.changes.every((c, i) => same(c, stored.changes[i]!))
  );
}

/** The diff without its digest. */
export function manifestDiffBody(tested: DiffSide, comparison: DiffSide): Omit<ManifestDiff, 'digest'> {
  // Both sides are bundles, so their components are unique by (kind, key); sorting is linear when, as always, they are
  // in order.
  const left = [...tested.components].sort(compareComponents);
  const right = [...comparison.components].sort(compareComponents);
  const changes: ManifestChange[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    const order = i === left.length ? 1 : j === right.length ? -1 : compareComponents(left[i]!, right[j]!);
    const id = order <= 0 ? left[i]! : right[j]!;
    const a = order <= 0 ? left[i++]!.digest : null;
    const b = order >= 0 ? right[j++]!.digest : null;
    if (a !== b)
      changes.push({
        comparison_component_digest: b,
        component_key: id.key,
        component_kind: id.kind,
        tested_component_digest: a,
      });
  }
  return {
    changes,
    comparison_bundle_digest: comparison.digest,
    evaluator_epoch: tested.evaluator_epoch,
    schema_version: MANIFEST_DIFF_SCHEMA_VERSION as 1,
    tested_bundle_digest: tested.digest,
  };
}

/** Recompute a stored diff's digest from its body. */
export function manifestDiffDigest(diff: Omit<ManifestDiff, 'digest'>): string {
  const {schema_version, tested_bundle_digest, comparison_bundle_digest, evaluator_epoch, changes} = diff;
  return stableDigest({changes, comparison_bundle_digest, evaluator_epoch, schema_version, tested_bundle_digest});
}

export {compareUtf16};
