import {executionKey} from '../../model/rollback/rollback-execution.js';
import {readExecution} from '../../store/kinds/rollback/rollback-execution.js';
import {fail, isAutoctxError, rethrowUnless} from '../../errors.js';
import {isRunnable, normalizeScope, versionKey, GLOBAL_SCOPE} from '../../model/release/release.js';
import {
  decideRoute,
  type RouteDecision,
  type RouteRequest,
  type RouteSnapshot,
  type Serving,
  type SnapshotCanary,
} from '../../model/release/routing.js';
import {exists} from '../../store/files/fs.js';
import type {ScenarioStore} from '../../store/index.js';
import {openScenario, type StoreOptions} from '../common/store-options.js';
import {allDescriptors, scopeActive, scopeView, servedForRouting, stateIn} from './registry-view.js';
import {readRegistryFile, registryState} from '../../store/kinds/release/release-registry.js';
import {rejectionOf} from './serving.js';
import {listReceiptNames} from '../../store/kinds/release/release-receipt.js';
import {requireSignedServing} from '../signing/signed-serving.js';
import {readActive, requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';

/**
 * The longest a long-running router serves a snapshot before it looks again: an emergency rollback reaches it within
 * this.
 */
export const SNAPSHOT_MAX_AGE_MS = 1000;

const FIELD_MAX = 512;

/** A requester field: one line of at most 512 characters (absent: left out). */
export function checkRequest(r: RouteRequest): RouteRequest {
  const out: RouteRequest = {};
  for (const k of ['user', 'session', 'event', 'tenant', 'resourceAddress', 'resourceId'] as const) {
    const v = r[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.length > FIELD_MAX || /[\u0000-\u001f\u007f]/.test(v) || !v.isWellFormed())
      fail('USAGE', `the request's ${k} must be one line of at most ${FIELD_MAX} characters`);
    if (v !== '') out[k] = v;
  }
  return out;
}

/**
 * What routing reads, loaded once: the scope's ACTIVE (its own release, else
 * active.json's) and its canaries in version order. A registry that does not
 * verify against its receipts is not used: routing then serves active.json's
 * bundle, and says why.
 */
export function routeSnapshot(store: ScenarioStore, scope: string): RouteSnapshot {
  requireSignedServing(store);
  const active = requireActive(store);
  try {
    const view = scopeView(store, scope, () => servedForRouting(store));
    const own = scopeActive(view);
    const registry = view.state.registry;
    const named = view.descriptors.find((d) => d.bundle_digest === active.bundle_digest);
    // The scope's own ACTIVE serves only where it can run, and never once rejected; else the global one does.
    const scoped =
      scope !== GLOBAL_SCOPE &&
      own.bundle_digest !== active.bundle_digest &&
      own.version !== null &&
      isRunnable(registry, own.version) &&
      rejectionOf(store, own.bundle_digest) === null;
    // A rejected bundle never serves: a CANARY naming one (a registry from before that rule, or edited) is passed over.
    const canaries: SnapshotCanary[] = view.descriptors
      .filter((d) => stateIn(view, d) === 'CANARY' && rejectionOf(store, d.bundle_digest) === null)
      .sort((a, b) => (versionKey(a.version) < versionKey(b.version) ? -1 : 1))
      .map((d) => {
        const c = registry.releases[versionKey(d.version)]?.canary;
        return {
          version: d.version,
          bundle_digest: d.bundle_digest,
          basis_points: c?.basis_points ?? null,
          tenants: c?.tenants ?? [],
          resource_families: c?.resource_families ?? [],
          salt: c?.salt ?? versionKey(d.version),
          runnable: isRunnable(registry, d.version),
        };
      });
    return {
      scenario: store.scenario,
      scope,
      active: scoped
        ? {version: own.version, bundle_digest: own.bundle_digest, source: 'scope'}
        : {version: named?.version ?? null, bundle_digest: active.bundle_digest, source: 'global'},
      canaries,
      registry_problem: null,
    };
  } catch (error) {
    if (!isAutoctxError(error) || error.exitCode !== 8) throw error;
    return {
      scenario: store.scenario,
      scope,
      active: {version: null, bundle_digest: active.bundle_digest, source: 'global'},
      canaries: [],
      registry_problem: error.message,
    };
  }
}

export type {Serving} from '../../model/release/routing.js';

/**
 * Whether what serves now is an emergency rollback away from this bundle:
 * active.json is a rollback from it, and the execution that wrote it (its key
 * follows from the pointer) is an emergency one. A session pinned to that
 * bundle leaves it at its next hook; any other change keeps the pin.
 */
export function emergencyRollbackOf(store: ScenarioStore, digest: string): boolean {
  const active = readActive(store);
  if (
    !active ||
    active.bundle_digest === digest ||
    active.promotion_id !== null ||
    active.rollback_target_digest !== digest ||
    !active.rationale.startsWith('rollback: ')
  )
    return false;
  const key = executionKey({
    scope: GLOBAL_SCOPE,
    scenario: store.scenario,
    from_digest: digest,
    to_digest: active.bundle_digest,
    executed_at: active.activated_at,
  });
  try {
    const r = readExecution(store, key);
    return r !== null && r.emergency && r.status !== 'REFUSED' && r.from_activated_at !== null;
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    return false;
  }
}

/**
 * Whether a session's pin to a canary has gone stale: the canary's evidence
 * compares it with a bundle active.json no longer names (a promotion replaced
 * it), and its release no longer serves (neither CANARY nor ACTIVE in the
 * global registry in force: the promotion ended it). Such a canary would
 * serve on evidence nobody holds any more, so its sessions are routed afresh.
 * A canary pulled by hand while its evidence holds keeps its sessions.
 */
function staleCanaryPin(store: ScenarioStore, pinned: Serving, parent: string | null): boolean {
  if (pinned.state !== 'CANARY') return false;
  const active = requireActive(store).bundle_digest;
  if (pinned.bundle_digest === active || parent === active) return false;
  const d = allDescriptors(store).find((x) => x.bundle_digest === pinned.bundle_digest);
  if (!d) return true;
  try {
    const state = registryState(store, GLOBAL_SCOPE).registry.releases[versionKey(d.version)]?.state;
    return state !== 'CANARY' && state !== 'ACTIVE';
  } catch (error) {
    // A registry that does not verify is not used (routing serves active.json's bundle): nor is a pin to a stale canary
    // kept by it.
    if (!isAutoctxError(error) || error.exitCode !== 8) throw error;
    return true;
  }
}

/**
 * The bundle that serves a session's delivery (spec 003 pins a bundle to an
 * event): the one it was pinned to, while the store holds it; else what
 * routing picks for its user, else its session id. A tree that names no
 * release is served by active.json without reading further.
 */
export function servingFor(
  store: ScenarioStore,
  who: {user?: string | undefined; session?: string | undefined; pinned?: Serving | null | undefined},
): Serving {
  requireSignedServing(store);
  // A session keeps its pinned bundle while the store holds it, unless an emergency rollback left it, it was rejected
  // since,
  // or it is a canary a promotion ended as stale.
  const pinnedBundle = who.pinned ? readBundle(store, who.pinned.bundle_digest) : null;
  if (
    who.pinned &&
    pinnedBundle &&
    !emergencyRollbackOf(store, who.pinned.bundle_digest) &&
    rejectionOf(store, who.pinned.bundle_digest) === null &&
    !staleCanaryPin(store, who.pinned, pinnedBundle.parent_digest)
  ) {
    return {...who.pinned, reason: 'pinned'};
  }
  if (!exists(store.paths.releasesDir))
    return {bundle_digest: requireActive(store).bundle_digest, version: null, state: 'ACTIVE', reason: 'active'};
  // Without a CANARY in the global registry in force every session gets active.json's bundle, whatever else the
  // registry holds,
  // and so would a registry that does not verify: the receipts need not be read to know that. The file is the registry
  // in
  // force unless a receipt follows the one that wrote it (a transition cut short): then routing's own snapshot decides.
  let stored: ReturnType<typeof readRegistryFile> = null;
  let broken = false;
  try {
    stored = readRegistryFile(store, GLOBAL_SCOPE);
  } catch (error) {
    if (!isAutoctxError(error) || error.exitCode !== 8) throw error;
    broken = true;
  }
  const behind = !broken && listReceiptNames(store, GLOBAL_SCOPE).length > (stored?.receipt?.seq ?? 0);
  if (!behind && (!stored || !Object.values(stored.releases).some((r) => r.state === 'CANARY'))) {
    const digest = requireActive(store).bundle_digest;
    const named = allDescriptors(store).find((d) => d.bundle_digest === digest);
    return {bundle_digest: digest, version: named?.version ?? null, state: 'ACTIVE', reason: 'active'};
  }
  const d = decideRoute(routeSnapshot(store, GLOBAL_SCOPE), checkRequest({user: who.user, session: who.session}));
  return {bundle_digest: d.bundle_digest, version: d.version, state: d.state, reason: d.reason};
}

export interface RouteOptions extends StoreOptions, RouteRequest {
  scope?: string | undefined;
}

export interface RouteResult extends RouteDecision {
  status: 'ok';
  active_source: 'scope' | 'global';
  registry_problem: string | null;
}

/** `autoctx route`: the bundle that serves one request, with its version, state and the reason. */
export function route(options: RouteOptions): RouteResult {
  const request = checkRequest(options);
  const scope = normalizeScope(options.scope);
  const store = openScenario(options);
  const snapshot = routeSnapshot(store, scope);
  return {
    status: 'ok',
    ...decideRoute(snapshot, request),
    active_source: snapshot.active.source,
    registry_problem: snapshot.registry_problem,
  };
}

export interface RouterOptions extends StoreOptions {
  scope?: string | undefined;
  /** Milliseconds now (tests inject a clock). */
  clock?: () => number;
  /**
   * Told once per version when a canary this deployment cannot run is passed over; called after the decision, never in
   * its way.
   */
  onNotRunnable?: (version: string) => void;
}

export interface Router {
  route(request: RouteRequest): RouteDecision;
  /** The snapshot in use, and when it was loaded (ms). */
  snapshot(): {snapshot: RouteSnapshot; loaded_at: number};
}

/**
 * A router for a long-running host: decisions in memory over a snapshot,
 * which is loaded again when it is a second old or more at a decision. The
 * same answer as `autoctx route`.
 */
export function openRouter(options: RouterOptions): Router {
  const scope = normalizeScope(options.scope);
  const store = openScenario(options);
  const clock = options.clock ?? Date.now;
  let snap = routeSnapshot(store, scope);
  let loaded = clock();
  const reported = new Set<string>();
  const report = (versions: readonly string[]) => {
    const fresh = versions.filter((v) => !reported.has(v));
    if (fresh.length === 0 || !options.onNotRunnable) return;
    for (const v of fresh) reported.add(v);
    const tell = options.onNotRunnable;
    queueMicrotask(() => {
      for (const v of fresh) {
        // biome-ignore lint/plugin: a reporter's failure is its own: routing goes on
        try {
          tell(v);
        } catch {
          // a reporter's failure is its own: routing goes on
        }
      }
    });
  };
  return {
    route(request) {
      const now = clock();
      if (now - loaded >= SNAPSHOT_MAX_AGE_MS) {
        snap = routeSnapshot(store, scope);
        loaded = now;
      }
      const decision = decideRoute(snap, checkRequest(request));
      if (decision.not_runnable.length > 0) report(decision.not_runnable);
      return decision;
    },
    snapshot: () => ({snapshot: snap, loaded_at: loaded}),
  };
}
