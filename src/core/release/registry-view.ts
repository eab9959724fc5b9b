import {fail} from '../../errors.js';
import {stableDigest} from '../../canonical/index.js';
import {
  GLOBAL_SCOPE,
  assertVersionName,
  sealReceipt,
  versionKey,
  type ReceiptCore,
  type Registry,
  type ReleaseDescriptor,
  type ReleaseState,
  type TransitionReceipt,
} from '../../model/release/release.js';
import {effectiveState, sortedReleases} from '../../model/release/release-gate.js';
import type {ScenarioStore} from '../../store/index.js';
import {requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {pointerHistory, pointerMoves} from '../../store/kinds/promotion/pointer-moves.js';
import {listDescriptorKeys, readDescriptor} from '../../store/kinds/release/release-descriptor.js';
import {registryState, type RegistryState} from '../../store/kinds/release/release-registry.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';

/**
 * Reading releases, checked: a descriptor as every reader takes it, and a
 * scope's view (its registry in force, what serves, what has served, every
 * descriptor) with the state each release is in. No writes; routing and
 * delivery read releases through this module alone.
 */

/**
 * A release descriptor, checked on read: it exists, its bundle exists and
 * verifies, and no other descriptor claims its name (under case folding)
 * with another bundle, or its bundle under another name.
 */
export function readRelease(store: ScenarioStore, version: string): ReleaseDescriptor {
  assertVersionName(version);
  const d = readDescriptor(store, version);
  if (!d)
    fail(
      'VERSION_NOT_FOUND',
      `scenario "${store.scenario}" has no release ${version} (autoctx release list shows them)`,
      {version},
    );
  if (!readBundle(store, d.bundle_digest)) {
    const rel = store.guard.relative(store.paths.releaseVersion(d.version));
    fail(
      'INTEGRITY',
      `${rel}: release ${d.version} names bundle ${d.bundle_digest}, which the scenario does not hold; run ` +
        `autoctx verify`,
      {file: rel},
    );
  }
  for (const key of listDescriptorKeys(store)) {
    if (key !== versionKey(d.version) && versionKey(key) === versionKey(d.version)) {
      // Another spelling of the name stored beside it (a case-sensitive file system allows it): two descriptors claim
      // one name.
      fail(
        'INTEGRITY',
        `two descriptors claim release ${d.version} (${key}.json beside ${versionKey(d.version)}.json); ` +
          `run autoctx verify`,
      );
    }
    if (key === versionKey(d.version)) continue;
    const other = readDescriptor(store, key);
    if (other && other.bundle_digest === d.bundle_digest)
      fail(
        'INTEGRITY',
        `releases ${d.version} and ${other.version} both name bundle ${d.bundle_digest}; run autoctx verify`,
      );
  }
  return d;
}

export function allDescriptors(store: ScenarioStore): ReleaseDescriptor[] {
  // Only the lowercased file names are descriptors; another spelling is refused where a release is read, and named by
  // verify.
  return listDescriptorKeys(store)
    .filter((k) => k === versionKey(k))
    .flatMap((k) => {
      const d = readDescriptor(store, k);
      return d ? [d] : [];
    });
}

/**
 * The moves that served in the global scope, oldest first, what serves now included (model/served.ts reads "has served"
 * from them).
 */
export function globalChain(store: ScenarioStore): readonly {to: string}[] {
  return pointerHistory(store, requireActive(store)).chain;
}

/**
 * The bundles a recorded pointer move made active (moves that served: a move recorded but cut short before the pointer
 * is not one).
 */
export function servedGlobally(store: ScenarioStore): Set<string> {
  return new Set(globalChain(store).map((m) => m.to));
}

export interface ScopeView {
  state: RegistryState;
  activeDigest: string;
  served: Set<string>;
  descriptors: ReleaseDescriptor[];
}

export function scopeView(
  store: ScenarioStore,
  scope: string,
  served: () => Set<string> = () => servedGlobally(store),
): ScopeView {
  return {
    state: registryState(store, scope),
    activeDigest: requireActive(store).bundle_digest,
    served: served(),
    descriptors: allDescriptors(store),
  };
}

/** Views of several scopes at once: what serves, what has served and the descriptors are read once for all of them. */
export function scopeViews(store: ScenarioStore, scopes: readonly string[]): ScopeView[] {
  const activeDigest = requireActive(store).bundle_digest;
  const served = servedGlobally(store);
  const descriptors = allDescriptors(store);
  return scopes.map((scope) => ({state: registryState(store, scope), activeDigest, served, descriptors}));
}

/**
 * What routing needs to know of what has served: the targets of recorded
 * promotions, rollbacks and rollovers, and what serves now. A release can
 * only be in CANARY by the gate, which never admits an init's baseline, so
 * for telling a canary from a release that has served since, the candidate
 * records (the init) need not be read; a promotion cut short before its
 * pointer counts as served here, which routes its sessions to ACTIVE until
 * the transition is completed.
 */
export function servedForRouting(store: ScenarioStore): Set<string> {
  return new Set([
    ...pointerMoves(store, undefined, undefined, []).map((m) => m.to),
    requireActive(store).bundle_digest,
  ]);
}

export function stateIn(view: ScopeView, d: ReleaseDescriptor): ReleaseState {
  return effectiveState(view.state.scope, view.state.registry.releases[versionKey(d.version)], {
    isGlobalActive: d.bundle_digest === view.activeDigest,
    servedGlobally: view.served.has(d.bundle_digest),
  });
}

/**
 * The scope's ACTIVE: its registry's ACTIVE release; in the global scope, and in a scope that has none, the bundle
 * active.json names.
 */
export function scopeActive(view: ScopeView): {version: string | null; bundle_digest: string} {
  if (view.state.scope !== GLOBAL_SCOPE) {
    const own = Object.values(view.state.registry.releases).find((r) => r.state === 'ACTIVE');
    const d = own && view.descriptors.find((x) => versionKey(x.version) === versionKey(own.version));
    if (d) return {version: d.version, bundle_digest: d.bundle_digest};
  }
  const named = view.descriptors.find((x) => x.bundle_digest === view.activeDigest);
  return {version: named?.version ?? null, bundle_digest: view.activeDigest};
}

/**
 * In the global scope, a served release that is not active can only be DEPRECATED or RETIRED: entries left behind by a
 * promotion outside the registry are brought in line.
 */
export function normalized(registry: Registry, view: ScopeView): Registry {
  if (registry.scope !== GLOBAL_SCOPE) return registry;
  const releases = {...registry.releases};
  for (const [key, r] of Object.entries(releases)) {
    const d = view.descriptors.find((x) => versionKey(x.version) === key);
    if (!d) continue;
    if (d.bundle_digest === view.activeDigest) delete releases[key];
    else if (view.served.has(d.bundle_digest) && r.state !== 'RETIRED' && r.state !== 'DEPRECATED')
      releases[key] = {version: r.version, state: 'DEPRECATED', canary: null, shadow: null};
  }
  return {...registry, releases: sortedReleases(releases)};
}

/**
 * The next receipt of a scope: numbered after, and chained to, the newest; starting from the registry in force; sealed
 * with the registry it writes (null: blocked).
 */
export function nextReceipt(
  store: ScenarioStore,
  state: RegistryState,
  fields: Omit<
    ReceiptCore,
    'schema_version' | 'seq' | 'scenario' | 'scope' | 'registry_before' | 'previous_receipt_sha256'
  >,
  next: Registry | null,
): TransitionReceipt {
  const previous = state.receipts.at(-1) ?? null;
  return sealReceipt(
    {
      schema_version: 1,
      seq: state.receipts.length + 1,
      scenario: store.scenario,
      scope: state.scope,
      ...fields,
      registry_before: state.digest,
      previous_receipt_sha256: previous ? stableDigest(previous) : null,
    },
    next,
  );
}
