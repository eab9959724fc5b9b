import {contentDiff, type ContentDiff} from '../../model/bundle/text-diff.js';
import {fail} from '../../errors.js';
import {type ContextBundle} from '../../model/bundle/bundle.js';
import {manifestDiff, type ManifestDiff} from '../../model/bundle/diff.js';
import {type Lifecycle} from '../../model/promotion/lifecycle.js';
import {componentFileName, readSource} from '../../store/index.js';
import {materializeBundle} from '../../store/files/materialize.js';
import {bundleFromSource, verifySourceDigests} from './build.js';
import {openScenario, type StoreOptions} from '../common/store-options.js';
import {resolveDigest} from '../common/resolve.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {readActive} from '../../store/kinds/promotion/active-pointer.js';

export interface BuildOptions {
  from: string;
  scenario?: string | undefined;
  evaluatorEpoch?: string | undefined;
  parent?: string | undefined;
}

export interface BuildResult {
  status: 'built';
  bundle_digest: string;
  manifest: ContextBundle;
}

/** Compute a manifest from SRC without a knowledge tree; writes nothing. */
export function buildBundle(options: BuildOptions): BuildResult {
  const source = readSource(options.from);
  verifySourceDigests(source);
  if (!source.header && options.scenario === undefined)
    fail('USAGE', 'a folder SRC needs --scenario (a manifest-shaped JSON carries its own)');
  if (
    source.header &&
    (options.scenario !== undefined || options.evaluatorEpoch !== undefined || options.parent !== undefined)
  ) {
    const h = source.header;
    if (
      (options.scenario !== undefined && options.scenario !== h.scenario) ||
      (options.evaluatorEpoch !== undefined && options.evaluatorEpoch !== h.evaluator_epoch) ||
      (options.parent !== undefined && options.parent !== h.parent_digest)
    ) {
      fail(
        'LINEAGE_MISMATCH',
        `${source.origin}: --scenario, --evaluator-epoch or --parent disagree with the manifest`,
      );
    }
  }
  const manifest = bundleFromSource(source, {
    scenario: options.scenario ?? '',
    evaluator_epoch: options.evaluatorEpoch ?? 'epoch-1',
    parent_digest: options.parent ?? null,
  });
  return {status: 'built', bundle_digest: manifest.digest, manifest};
}

export interface ShowResult {
  status: 'ok';
  scenario: string;
  bundle_digest: string;
  lifecycle: Lifecycle | null;
  active: boolean;
  manifest: ContextBundle;
}

export function showBundle(options: StoreOptions & {digest: string}): ShowResult {
  const store = openScenario(options);
  const digest = resolveDigest(store, options.digest);
  const manifest = requireBundle(store, digest);
  const record = readRecord(store, digest);
  const active = readActive(store);
  return {
    status: 'ok',
    scenario: store.scenario,
    bundle_digest: digest,
    lifecycle: record?.lifecycle ?? null,
    active: active?.bundle_digest === digest,
    manifest,
  };
}

export interface MaterializeResult {
  status: 'materialized';
  scenario: string;
  bundle_digest: string;
  directory: string;
  files: string[];
}

export function materialize(options: StoreOptions & {digest: string; directory: string}): MaterializeResult {
  const store = openScenario(options);
  const digest = resolveDigest(store, options.digest);
  const bundle = requireBundle(store, digest);
  const files = materializeBundle(bundle, options.directory);
  return {status: 'materialized', scenario: store.scenario, bundle_digest: digest, directory: options.directory, files};
}

export interface DiffResult {
  status: 'ok';
  scenario: string;
  tested_bundle_digest: string;
  comparison_bundle_digest: string;
  manifest_diff: ManifestDiff;
  /** Each changed component's text, as a unified diff from B's to A's. */
  content_diffs: ContentDiff[];
}

/** The manifest diff of bundle a (tested) against bundle b (comparison), and the content of every change. */
export function diffBundles(options: StoreOptions & {a: string; b: string}): DiffResult {
  const store = openScenario(options);
  const a = requireBundle(store, resolveDigest(store, options.a));
  const b = requireBundle(store, resolveDigest(store, options.b));
  const diff = manifestDiff(a, b);
  const find = (bundle: ContextBundle, kind: string, key: string) =>
    bundle.components.find((c) => c.kind === kind && c.key === key) ?? null;
  const name = (label: string, c: {media_type: string} | null, kind: string, key: string) =>
    `${label}/${kind}/${componentFileName(key, c?.media_type ?? 'text/plain')}`;
  const content_diffs = diff.changes.map((ch) => {
    const before = find(b, ch.component_kind, ch.component_key);
    const after = find(a, ch.component_kind, ch.component_key);
    // Labelled as git labels every diff: a/ the side it goes from (B, the --- lines), b/ the side it goes to (A).
    return contentDiff(ch.component_kind, ch.component_key, before, after, {
      before: name('a', before, ch.component_kind, ch.component_key),
      after: name('b', after, ch.component_kind, ch.component_key),
    });
  });
  return {
    status: 'ok',
    scenario: store.scenario,
    tested_bundle_digest: a.digest,
    comparison_bundle_digest: b.digest,
    manifest_diff: diff,
    content_diffs,
  };
}
