/**
 * The decisions of a release transition: what the gate says of a move, what
 * blocks a rejected bundle, when canary evidence is needed, whether the same
 * transition was done before, and a global promotion made but not recorded.
 */
import {requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {readPromotion} from '../../store/kinds/promotion/history.js';
import {jsonEqual} from '../../canonical/index.js';
import {
  GLOBAL_SCOPE,
  isRunnable,
  versionKey,
  type Blocker,
  type ReleaseDescriptor,
  type ReleaseState,
  type TransitionReceipt,
} from '../../model/release/release.js';
import {applyTransition, releaseGate, type SettingsChange} from '../../model/release/release-gate.js';
import type {ScenarioStore} from '../../store/index.js';
import {rejectionOf} from './serving.js';
import {normalized, scopeActive, stateIn, type ScopeView} from './registry-view.js';

export interface Decision {
  from: ReleaseState;
  blockers: Blocker[];
  deprecate: string[];
}

export function decide(view: ScopeView, d: ReleaseDescriptor, to: ReleaseState, evidence: Blocker | null): Decision {
  const from = stateIn(view, d);
  const active = scopeActive(view);
  const otherActive = active.bundle_digest !== d.bundle_digest;
  const blockers = releaseGate({
    scope: view.state.scope,
    version: d.version,
    from,
    to,
    runnable: isRunnable(view.state.registry, d.version),
    evidence,
    otherActive,
  });
  // Only the scope's own ACTIVE is deprecated: a scope without one falls back to the global ACTIVE, which it does not
  // own.
  const own =
    view.state.scope === GLOBAL_SCOPE
      ? active.version
      : (Object.values(view.state.registry.releases).find((r) => r.state === 'ACTIVE')?.version ?? null);
  const deprecate = to === 'ACTIVE' && own !== null && otherActive ? [own] : [];
  return {from, blockers, deprecate};
}

/**
 * The blocker for a transition that would make a rejected bundle serve (to SHADOW, CANARY or ACTIVE), or null. The
 * global ACTIVE's is promote's own refusal.
 */
export function rejectedBlocker(
  store: ScenarioStore,
  d: ReleaseDescriptor,
  to: ReleaseState,
  scope: string,
): Blocker | null {
  if ((to !== 'SHADOW' && to !== 'CANARY' && to !== 'ACTIVE') || (to === 'ACTIVE' && scope === GLOBAL_SCOPE))
    return null;
  const why = rejectionOf(store, d.bundle_digest);
  return why === null
    ? null
    : {code: 'CANDIDATE_REJECTED', detail: `${why}: a rejected bundle never serves, as ${to} or otherwise`};
}

/**
 * Whether a target needs the canary evidence: CANARY, and ACTIVE outside the global scope unless the bundle served
 * globally. Dry runs of the global ACTIVE check it too (promote's gates, without the swap).
 */
export function needsEvidence(view: ScopeView, d: ReleaseDescriptor, to: ReleaseState, dryRun: boolean): boolean {
  if (to === 'CANARY') return true;
  if (to !== 'ACTIVE') return false;
  if (view.state.scope === GLOBAL_SCOPE) return dryRun;
  return !view.served.has(d.bundle_digest);
}

/**
 * The same transition run again after it was done (a re-run after a crash,
 * or a script that repeats itself): the newest receipt of the scope applied
 * it, with the same request and rationale, and nothing has changed since.
 * It is answered as it was; nothing is written.
 */
export function repeatOf(
  view: ScopeView,
  d: ReleaseDescriptor,
  t: {requested: string; to: ReleaseState; rationale: string; settings: SettingsChange},
): TransitionReceipt | null {
  const last = view.state.receipts.at(-1);
  if (
    !last ||
    !last.applied ||
    last.action !== 'transition' ||
    last.version === null ||
    versionKey(last.version) !== versionKey(d.version)
  )
    return null;
  if (
    last.requested_state !== t.requested ||
    last.target_state !== t.to ||
    last.rationale !== t.rationale ||
    view.state.digest !== last.registry_after
  )
    return null;
  if (stateIn(view, d) !== t.to) return null;
  const unchanged = applyTransition(view.state.registry, {
    version: d.version,
    to: t.to,
    settings: t.settings,
    deprecate: [],
  });
  return jsonEqual(normalized(unchanged, view).releases, view.state.registry.releases) ? last : null;
}

/**
 * The global ACTIVE's promotion made but not recorded (a transition cut short
 * after promote): active.json names this release's bundle through a
 * promotion, the registry still holds it as CANARY, and no receipt names that
 * promotion.
 */
export function unrecordedPromotion(
  store: ScenarioStore,
  view: ScopeView,
  d: ReleaseDescriptor,
): {promotion_id: string; deprecate: string[]} | null {
  const active = requireActive(store);
  if (active.bundle_digest !== d.bundle_digest || active.promotion_id === null) return null;
  if (view.state.registry.releases[versionKey(d.version)]?.state !== 'CANARY') return null;
  if (view.state.receipts.some((r) => r.promotion_id === active.promotion_id)) return null;
  const promotion = readPromotion(store, active.promotion_id);
  if (!promotion || promotion.candidate_digest !== d.bundle_digest) return null;
  const before = view.descriptors.find((x) => x.bundle_digest === promotion.incumbent_digest);
  return {promotion_id: active.promotion_id, deprecate: before ? [before.version] : []};
}
