/** `autoctx release list`, `show` and `history`, and what `status` shows of releases: reads only. */
import {
  assertVersionName,
  GLOBAL_SCOPE,
  isRunnable,
  normalizeScope,
  versionKey,
  type Registry,
  type ReleaseDescriptor,
  type ReleaseState,
  type TransitionReceipt,
} from '../../model/release/release.js';
import type {ScenarioStore} from '../../store/index.js';
import {listDescriptorKeys} from '../../store/kinds/release/release-descriptor.js';
import {listReleaseScopes} from '../../store/kinds/release/release-receipt.js';
import {registryState} from '../../store/kinds/release/release-registry.js';
import {openScenario, type StoreOptions} from '../common/store-options.js';
import {readRelease, scopeActive, scopeViews, stateIn, type ScopeView} from './registry-view.js';

export interface ReleaseEntry {
  version: string;
  bundle_digest: string;
  state: ReleaseState;
  canary: Registry['releases'][string]['canary'];
  shadow: Registry['releases'][string]['shadow'];
  runnable: boolean;
}

export interface ScopeSummary {
  scope: string;
  registry_digest: string | null;
  registry_pending: boolean;
  active: {version: string | null; bundle_digest: string};
  releases: ReleaseEntry[];
  runnable: Registry['runnable'];
  receipts: number;
}

function summarize(view: ScopeView): ScopeSummary {
  const scope = view.state.scope;
  const releases = view.descriptors.map((d) => {
    const entry = view.state.registry.releases[versionKey(d.version)];
    const state = stateIn(view, d);
    return {
      version: d.version,
      bundle_digest: d.bundle_digest,
      state,
      canary: state === 'CANARY' ? (entry?.canary ?? null) : null,
      shadow: state === 'SHADOW' ? (entry?.shadow ?? null) : null,
      runnable: isRunnable(view.state.registry, d.version),
    };
  });
  return {
    scope,
    registry_digest: view.state.digest,
    registry_pending: view.state.pending !== null,
    active: scopeActive(view),
    releases,
    runnable: view.state.registry.runnable,
    receipts: view.state.receipts.length,
  };
}

/** Every scope with a registry or receipts, global first (always listed). */
export function releaseScopes(store: ScenarioStore): string[] {
  return [GLOBAL_SCOPE, ...listReleaseScopes(store).filter((s) => s !== GLOBAL_SCOPE)];
}

export interface ListResult {
  status: 'ok';
  scenario: string;
  scopes: ScopeSummary[];
}

export function releaseList(options: StoreOptions & {scope?: string | undefined}): ListResult {
  const only = options.scope === undefined ? undefined : normalizeScope(options.scope);
  const store = openScenario(options);
  const scopes = only !== undefined ? [only] : releaseScopes(store);
  return {status: 'ok', scenario: store.scenario, scopes: scopeViews(store, scopes).map(summarize)};
}

/**
 * What status shows of releases: each scope that has any, or the global ACTIVE's name when releases exist. The scopes
 * in `diverged` (their receipts fork: status lists them under `diverged`) are left out.
 */
export function releaseStatus(store: ScenarioStore, diverged: ReadonlySet<string> = new Set()): ScopeSummary[] {
  if (listDescriptorKeys(store).length === 0 && listReleaseScopes(store).length === 0) return [];
  return scopeViews(
    store,
    releaseScopes(store).filter((s) => !diverged.has(s)),
  ).map(summarize);
}

export interface ShowResult {
  status: 'ok';
  scenario: string;
  descriptor: ReleaseDescriptor;
  states: Array<{scope: string; state: ReleaseState}>;
}

export function releaseShow(options: StoreOptions & {version: string}): ShowResult {
  assertVersionName(options.version);
  const store = openScenario(options);
  const descriptor = readRelease(store, options.version);
  const states = scopeViews(store, releaseScopes(store)).map((view) => ({
    scope: view.state.scope,
    state: stateIn(view, descriptor),
  }));
  return {status: 'ok', scenario: store.scenario, descriptor, states};
}

export interface HistoryResult {
  status: 'ok';
  scenario: string;
  receipts: TransitionReceipt[];
}

/**
 * Every receipt, applied and blocked, of one scope or all, in order (scope, then number). Readers drop the registry
 * copy each applied one carries.
 */
export function releaseHistory(
  options: StoreOptions & {scope?: string | undefined; version?: string | undefined},
): HistoryResult {
  const only = options.scope === undefined ? undefined : normalizeScope(options.scope);
  if (options.version !== undefined) assertVersionName(options.version);
  const store = openScenario(options);
  const receipts = (only !== undefined ? [only] : releaseScopes(store))
    .flatMap((s) => registryState(store, s).receipts)
    .filter(
      (r) =>
        options.version === undefined || (r.version !== null && versionKey(r.version) === versionKey(options.version)),
    );
  return {status: 'ok', scenario: store.scenario, receipts};
}
