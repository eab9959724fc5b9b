import {compareUtf16, stableDigest} from '../canonical/index.js';
import {compareComponents, type ContextBundle} from './bundle.js';

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

/**
 * The component-level difference of `tested` against `comparison`: the union
 * of (kind, key) in UTF-16 order, skipping components with equal digests; null
 * means absent on that side.
 */
export function manifestDiff(tested: ContextBundle, comparison: ContextBundle): ManifestDiff {
  const keyOf = (c: {kind: string; key: string}) => `${c.kind}\u0000${c.key}`;
  const left = new Map(tested.components.map((c) => [keyOf(c), c]));
  const right = new Map(comparison.components.map((c) => [keyOf(c), c]));
  const all = new Map<string, {kind: string; key: string}>();
  for (const c of [...tested.components, ...comparison.components]) all.set(keyOf(c), {kind: c.kind, key: c.key});
  const changes: ManifestChange[] = [];
  for (const id of [...all.values()].sort(compareComponents)) {
    const a = left.get(keyOf(id))?.digest ?? null;
    const b = right.get(keyOf(id))?.digest ?? null;
    if (a === b) continue;
    changes.push({component_kind: id.kind, component_key: id.key, tested_component_digest: a, comparison_component_digest: b});
  }
  const body = {
    schema_version: MANIFEST_DIFF_SCHEMA_VERSION as 1,
    tested_bundle_digest: tested.digest,
    comparison_bundle_digest: comparison.digest,
    evaluator_epoch: tested.evaluator_epoch,
    changes,
  };
  return {...body, digest: stableDigest(body)};
}

/** Recompute a stored diff's digest from its body. */
export function manifestDiffDigest(diff: Omit<ManifestDiff, 'digest'>): string {
  const {schema_version, tested_bundle_digest, comparison_bundle_digest, evaluator_epoch, changes} = diff;
  return stableDigest({schema_version, tested_bundle_digest, comparison_bundle_digest, evaluator_epoch, changes});
}

export {compareUtf16};
