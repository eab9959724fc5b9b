import {GLOBAL_SCOPE, versionKey, type ReleaseDescriptor, type ReleaseState} from '../../model/release/release.js';
import {applyTransition} from '../../model/release/release-gate.js';
import type {ScenarioStore} from '../../store/index.js';
import {rejectionReason} from '../../model/promotion/rejected.js';
import {createReceipt, listReleaseScopes, receiptFile} from '../../store/kinds/release/release-receipt.js';
import {registryState, settleRegistry, swapRegistry} from '../../store/kinds/release/release-registry.js';
import {allDescriptors, nextReceipt, normalized, scopeView, stateIn} from './registry-view.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {readNegativeResult} from '../../store/kinds/promotion/negative-result.js';
import {readStaleTerminalization} from '../../store/kinds/promotion/terminal-markers.js';
import {readActive} from '../../store/kinds/promotion/active-pointer.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';

/**
 * One rule: a rejected bundle never serves anywhere, neither through
 * active.json nor as a release's ACTIVE, CANARY or SHADOW in any scope.
 * "Rejected" is one definition (rejectionOf), read by every reader of what
 * serves (routing, delivery, shadow sampling, verify) and kept by every
 * rejection (withdrawRelease first, then the negative result, then the record).
 */

/** Why a bundle must never serve (the one definition, rejectionReason, from the store's own records), or null. */
export function rejectionOf(store: ScenarioStore, digest: string): string | null {
  const lifecycle = readRecord(store, digest)?.lifecycle ?? null;
  if (lifecycle === 'rejected')
    return rejectionReason(digest, {lifecycle, hasNegativeResult: false, hasStaleRejection: false});
  return rejectionReason(digest, {
    lifecycle,
    hasNegativeResult: readNegativeResult(store, digest) !== null,
    hasStaleRejection: readStaleTerminalization(store, digest) !== null,
  });
}

/**
 * Where a bundle serves as ACTIVE: active.json, or a scope's own ACTIVE
 * release (each in words). A rejection of such a bundle is refused: only a
 * rollback stops an ACTIVE serving. Reads the registries in force (a
 * registry one receipt behind is read as its receipt wrote it).
 */
export function activePlaces(store: ScenarioStore, digest: string): string[] {
  const places: string[] = [];
  const active = readActive(store);
  if (active?.bundle_digest === digest)
    places.push(
      `active.json names it` +
        (active.promotion_id !== null && readRecord(store, digest)?.lifecycle !== 'active'
          ? ' (a promotion cut short: autoctx repair completes it)'
          : ''),
    );
  const d = allDescriptors(store).find((x) => x.bundle_digest === digest);
  if (!d) return places;
  for (const scope of listReleaseScopes(store)) {
    if (scope === GLOBAL_SCOPE) continue;
    if (registryState(store, scope).registry.releases[versionKey(d.version)]?.state === 'ACTIVE')
      places.push(`release ${d.version} is ACTIVE in scope ${scope}`);
  }
  return places;
}

/**
 * Every scope's registry in force, read and validated: one edited by hand (or
 * whose receipt does not produce it) fails INTEGRITY (exit 8). A command that
 * may end releases calls it before its first write, so a refusal leaves
 * nothing behind.
 */
export function checkScopeRegistries(store: ScenarioStore): void {
  for (const scope of listReleaseScopes(store)) registryState(store, scope);
}

export interface Withdrawal {
  scope: string;
  version: string;
  from: ReleaseState;
  to: ReleaseState;
  receipt_seq: number;
  /** The receipt's file. */
  receipt_file: string;
}

/**
 * What a withdrawn release becomes: a CANARY is DEPRECATED, a SHADOW RETIRED (both in the transition table; neither
 * serves).
 */
const WITHDRAWN: Partial<Record<ReleaseState, ReleaseState>> = {CANARY: 'DEPRECATED', SHADOW: 'RETIRED'};

/**
 * Under the scenario lock: one release ended in one scope by an applied transition receipt, then its registry. A
 * registry one receipt behind is completed first.
 */
function endRelease(
  store: ScenarioStore,
  scope: string,
  d: ReleaseDescriptor,
  target: (from: ReleaseState) => ReleaseState | undefined,
  why: {rationale: string; at: string; actor: () => string},
): Withdrawal | null {
  let view = scopeView(store, scope);
  // A registry one receipt behind is completed first (a withdrawal cut short after its receipt, re-run, ends here).
  if (settleRegistry(store, view.state)) view = scopeView(store, scope);
  const from = stateIn(view, d);
  const to = target(from);
  if (to === undefined) return null;
  const next = normalized(
    applyTransition(view.state.registry, {version: d.version, to, settings: {}, deprecate: []}),
    view,
  );
  const receipt = nextReceipt(
    store,
    view.state,
    {
      action: 'transition',
      version: d.version,
      bundle_digest: d.bundle_digest,
      actor: why.actor(),
      at: why.at,
      from_state: from,
      requested_state: to,
      target_state: to,
      applied: true,
      blockers: [],
      rationale: why.rationale,
      deprecated_versions: [],
      promotion_id: null,
    },
    next,
  );
  createReceipt(store, receipt);
  swapRegistry(store, scope, view.state.digest, receipt.registry!);
  return {scope, version: d.version, from, to, receipt_seq: receipt.seq, receipt_file: receiptFile(store, receipt)};
}

/** The actor, resolved once and only when a receipt is written. */
function once(actor: () => string): () => string {
  let value: string | undefined;
  return () => (value ??= actor());
}

/**
 * Under the scenario lock: every CANARY and SHADOW of the release that names
 * this bundle ended, scope by scope, each by an applied transition receipt
 * written before its registry, as every transition is (a crash between the
 * two leaves a registry one receipt behind, which the next change or
 * `autoctx repair` completes). Returns what was withdrawn; nothing when
 * nothing serves it.
 */
export function withdrawRelease(
  store: ScenarioStore,
  digest: string,
  why: {rationale: string; at: string; actor: () => string},
): Withdrawal[] {
  const d = allDescriptors(store).find((x) => x.bundle_digest === digest);
  if (!d) return [];
  checkScopeRegistries(store);
  const actor = once(why.actor);
  return listReleaseScopes(store).flatMap(
    (scope) => endRelease(store, scope, d, (from) => WITHDRAWN[from], {...why, actor}) ?? [],
  );
}

/**
 * Under the scenario lock, in a promotion, before the pointer moves to
 * `promoted`: every CANARY, in every scope, of a bundle that was not compared
 * with `promoted` (its parent is another bundle: the one active.json names
 * now, which the promotion replaces) is DEPRECATED by a receipt, since its
 * evidence goes stale with the move. The promoted bundle's own release is
 * left to the transition that records the promotion.
 */
export function endStaleCanaries(
  store: ScenarioStore,
  promoted: string,
  why: {rationale: string; at: string; actor: () => string},
): Withdrawal[] {
  checkScopeRegistries(store);
  const actor = once(why.actor);
  const out: Withdrawal[] = [];
  const descriptors = allDescriptors(store).filter((d) => d.bundle_digest !== promoted);
  for (const scope of listReleaseScopes(store)) {
    const view = scopeView(store, scope);
    for (const d of descriptors) {
      if (stateIn(view, d) !== 'CANARY' && view.state.pending === null) continue;
      const parent = readBundle(store, d.bundle_digest)?.parent_digest;
      if (parent === undefined || parent === promoted) continue;
      const w = endRelease(store, scope, d, (from) => (from === 'CANARY' ? 'DEPRECATED' : undefined), {...why, actor});
      if (w) out.push(w);
    }
  }
  return out;
}
