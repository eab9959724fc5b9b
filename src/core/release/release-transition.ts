/** `autoctx release transition`: one gate for every state change of a release in a scope. */
import {requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {readPromotion} from '../../store/kinds/promotion/history.js';
import {jsonEqual} from '../../canonical/index.js';
import {AutoctxError, fail} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {
  assertVersionName,
  canonicalState,
  GLOBAL_SCOPE,
  isRunnable,
  normalizeScope,
  RELEASE_STATES,
  STATE_ALIASES,
  versionKey,
  type Blocker,
  type Registry,
  type ReleaseDescriptor,
  type ReleaseState,
  type TransitionReceipt,
} from '../../model/release/release.js';
import {applyTransition, releaseGate, type SettingsChange} from '../../model/release/release-gate.js';
import type {ScenarioStore} from '../../store/index.js';
import {pausePoint} from '../../store/index.js';
import {createReceipt} from '../../store/kinds/release/release-receipt.js';
import {settleRegistry, swapRegistry, type RegistryState} from '../../store/kinds/release/release-registry.js';
import {prepareSigning, signingInputs} from '../signing/signing.js';
import {requireSignedSeal} from '../signing/trust-gates.js';
import {resolveActor} from '../common/actor.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {canaryEvidence, promote} from '../promotion/promote.js';
import {rejectionOf} from './serving.js';
import {
  nextReceipt,
  normalized,
  readRelease,
  scopeActive,
  scopeView,
  stateIn,
  type ScopeView,
} from './registry-view.js';
import {nonBlankList, parseExpect, staleIfMoved} from './release-input.js';

export interface TransitionOptions extends StoreOptions {
  version: string;
  to: string;
  rationale: string;
  scope?: string | undefined;
  expectRegistry?: string | undefined;
  canaryBasisPoints?: number | undefined;
  canaryTenants?: string[] | undefined;
  canaryResourceFamilies?: string[] | undefined;
  canarySalt?: string | undefined;
  shadowBasisPoints?: number | undefined;
  shadowDailyCap?: number | undefined;
  actor?: string | undefined;
  dryRun?: boolean | undefined;
  timeoutSeconds?: number | undefined;
}

export interface TransitionResult {
  status: 'applied' | 'blocked' | 'allowed';
  scenario: string;
  scope: string;
  version: string;
  bundle_digest: string;
  requested_state: string;
  from_state: ReleaseState;
  target_state: ReleaseState;
  blockers: Blocker[];
  deprecated_versions: string[];
  promotion_id: string | null;
  receipt_seq: number | null;
  registry_before: string | null;
  registry_after: string | null;
  dry_run: boolean;
}

/** Every flag of a transition, validated before anything is read, locked or written. */
function checkTransition(options: TransitionOptions): {
  to: ReleaseState;
  scope: string;
  expect: string | null | undefined;
  settings: SettingsChange;
} {
  assertVersionName(options.version);
  if (typeof options.rationale !== 'string' || options.rationale.trim() === '')
    fail('USAGE', 'a transition needs a non-blank --rationale');
  const to = canonicalState(options.to);
  if (to === null)
    fail(
      'INVALID_INPUT',
      `unknown state ${JSON.stringify(options.to)}: one of ${RELEASE_STATES.join(', ')} (older names accepted: ${Object.keys(STATE_ALIASES).join(', ')})`,
    );
  const scope = normalizeScope(options.scope);
  const expect = parseExpect(options.expectRegistry);
  const canary =
    options.canaryBasisPoints !== undefined ||
    options.canaryTenants !== undefined ||
    options.canaryResourceFamilies !== undefined ||
    options.canarySalt !== undefined;
  const shadow = options.shadowBasisPoints !== undefined || options.shadowDailyCap !== undefined;
  if (canary && to !== 'CANARY')
    fail(
      'USAGE',
      `--canary-percent, --canary-tenants, --canary-resource-families and --canary-salt set a canary; this transition is to ${to}`,
    );
  if (shadow && to !== 'SHADOW')
    fail('USAGE', `--shadow-percent and --shadow-daily-cap set a shadow run; this transition is to ${to}`);
  if (
    options.shadowDailyCap !== undefined &&
    (!Number.isSafeInteger(options.shadowDailyCap) || options.shadowDailyCap < 0)
  )
    fail('USAGE', '--shadow-daily-cap must be a whole number, 0 or more');
  const settings: SettingsChange = {};
  if (canary) {
    settings.canary = {
      ...(options.canaryBasisPoints !== undefined ? {basis_points: options.canaryBasisPoints} : {}),
      ...(options.canaryTenants !== undefined
        ? {tenants: nonBlankList(options.canaryTenants, '--canary-tenants')}
        : {}),
      ...(options.canaryResourceFamilies !== undefined
        ? {resource_families: nonBlankList(options.canaryResourceFamilies, '--canary-resource-families')}
        : {}),
      ...(options.canarySalt !== undefined ? {salt: nonBlankList([options.canarySalt], '--canary-salt')[0]!} : {}),
    };
  }
  if (shadow)
    settings.shadow = {
      ...(options.shadowBasisPoints !== undefined ? {basis_points: options.shadowBasisPoints} : {}),
      ...(options.shadowDailyCap !== undefined ? {daily_cap: options.shadowDailyCap} : {}),
    };
  return {to, scope, expect, settings};
}

interface Decision {
  from: ReleaseState;
  blockers: Blocker[];
  deprecate: string[];
}

function decide(view: ScopeView, d: ReleaseDescriptor, to: ReleaseState, evidence: Blocker | null): Decision {
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
function rejectedBlocker(store: ScenarioStore, d: ReleaseDescriptor, to: ReleaseState, scope: string): Blocker | null {
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
function needsEvidence(view: ScopeView, d: ReleaseDescriptor, to: ReleaseState, dryRun: boolean): boolean {
  if (to === 'CANARY') return true;
  if (to !== 'ACTIVE') return false;
  if (view.state.scope === GLOBAL_SCOPE) return dryRun;
  return !view.served.has(d.bundle_digest);
}

function receiptFor(
  store: ScenarioStore,
  state: RegistryState,
  t: {
    d: ReleaseDescriptor;
    requested: string;
    to: ReleaseState;
    decision: Decision;
    actor: string;
    at: string;
    rationale: string;
    next: Registry | null;
    promotionId: string | null;
  },
): TransitionReceipt {
  return nextReceipt(
    store,
    state,
    {
      action: 'transition',
      version: t.d.version,
      bundle_digest: t.d.bundle_digest,
      actor: t.actor,
      at: t.at,
      from_state: t.decision.from,
      requested_state: t.requested,
      target_state: t.to,
      applied: t.next !== null,
      blockers: t.decision.blockers,
      rationale: t.rationale,
      deprecated_versions: t.next !== null ? t.decision.deprecate : [],
      promotion_id: t.promotionId,
    },
    t.next,
  );
}

function resultOf(
  store: ScenarioStore,
  r: TransitionReceipt | null,
  f: {
    d: ReleaseDescriptor;
    scope: string;
    requested: string;
    to: ReleaseState;
    decision: Decision;
    before: string | null;
    dryRun: boolean;
  },
): TransitionResult {
  const blocked = f.decision.blockers.length > 0;
  return {
    status: f.dryRun ? (blocked ? 'blocked' : 'allowed') : blocked ? 'blocked' : 'applied',
    scenario: store.scenario,
    scope: f.scope,
    version: f.d.version,
    bundle_digest: f.d.bundle_digest,
    requested_state: f.requested,
    from_state: f.decision.from,
    target_state: f.to,
    blockers: f.decision.blockers,
    deprecated_versions: r?.deprecated_versions ?? [],
    promotion_id: r?.promotion_id ?? null,
    receipt_seq: r?.seq ?? null,
    registry_before: r?.registry_before ?? f.before,
    registry_after: r?.registry_after ?? f.before,
    dry_run: f.dryRun,
  };
}

/**
 * `autoctx release transition`: one gate for every transition. A blocked
 * one writes only its receipt (exit 3); an applied one writes its receipt,
 * then swaps the registry. To ACTIVE in the global scope it is `promote`,
 * through promote's own code and exit codes, and the receipt records it.
 */
export async function releaseTransition(options: TransitionOptions): Promise<TransitionResult> {
  const {to, scope, expect, settings} = checkTransition(options);
  lockTimeout(options);
  const requested = options.to.trim();
  const rationale = options.rationale.trim();
  const dryRun = options.dryRun === true;
  const inputs = signingInputs(options);
  const store = openScenario(options);
  const actor = resolveActor(options.actor, store.paths.dir);
  // In a signed tree every applied receipt is signed by the actor's key, and every step chained (a blocked receipt is
  // not signed itself).
  const signing = dryRun ? null : prepareSigning(store, options, {actor, role: 'sign'}, inputs);
  const d = readRelease(store, options.version);
  // CANARY serves real sessions: in a signed tree its evidence must be signed, as promote requires for ACTIVE.
  if (signing?.trust && to === 'CANARY') requireSignedSeal(store, signing.trust, d.bundle_digest);
  const first = scopeView(store, scope);
  staleIfMoved(expect, first.state.digest, scope);
  const evidence = needsEvidence(first, d, to, dryRun)
    ? await canaryEvidence(store, d.bundle_digest, {timeoutSeconds: options.timeoutSeconds})
    : null;
  if (dryRun) {
    const decision = decide(first, d, to, evidence);
    const rejected = rejectedBlocker(store, d, to, scope);
    if (rejected) decision.blockers.unshift(rejected);
    if (to === 'ACTIVE' && scope === GLOBAL_SCOPE && evidence && decision.blockers.length === 0)
      decision.blockers.push(evidence);
    return resultOf(store, null, {d, scope, requested, to, decision, before: first.state.digest, dryRun});
  }
  const at = () => isoTimestamp(now(options));
  /** Under the lock: complete a change cut short, re-check the swap, decide, write the receipt, then the registry. */
  const again = (view: ScopeView, r: TransitionReceipt) =>
    resultOf(store, r, {
      d,
      scope,
      requested,
      to,
      decision: {from: r.from_state!, blockers: [], deprecate: r.deprecated_versions},
      before: r.registry_before,
      dryRun,
    });
  const commit = (decide_: (view: ScopeView) => Decision, promotionId: string | null, afterPromotion: boolean) =>
    store.withLock(lockTimeout(options), () => {
      const view = scopeView(store, scope);
      settleRegistry(store, view.state);
      // With --expect-registry the script's expectation decides: a registry that moved is STALE_REGISTRY, even for the
      // same request.
      if (!afterPromotion) staleIfMoved(expect, view.state.digest, scope);
      const repeated = repeatOf(view, d, {requested, to, rationale, settings});
      if (repeated) return again(view, repeated);
      const decision = decide_(view);
      // A rejected bundle never serves: decided here, under the lock, where no rejection is half done (a reject may
      // have run since the evidence was read).
      // It is named first, whatever else blocks (a rejection that ended the release leaves it in a state the table does
      // not move on from).
      const rejected = rejectedBlocker(store, d, to, scope);
      if (rejected) decision.blockers.unshift(rejected);
      const next =
        decision.blockers.length === 0
          ? normalized(
              applyTransition(view.state.registry, {version: d.version, to, settings, deprecate: decision.deprecate}),
              view,
            )
          : null;
      const receipt = receiptFor(store, view.state, {
        d,
        requested,
        to,
        decision,
        actor,
        at: at(),
        rationale,
        next,
        promotionId,
      });
      createReceipt(store, receipt);
      if (receipt.registry) swapRegistry(store, scope, view.state.digest, receipt.registry);
      return resultOf(store, receipt, {d, scope, requested, to, decision, before: view.state.digest, dryRun});
    });
  if (to === 'ACTIVE' && scope === GLOBAL_SCOPE) {
    // The same transition done before (its receipt written; a registry cut short is completed first): answered as it
    // was.
    const repeated = await store.withLock(lockTimeout(options), () => {
      const view = scopeView(store, scope);
      settleRegistry(store, view.state);
      staleIfMoved(expect, view.state.digest, scope);
      return repeatOf(view, d, {requested, to, rationale, settings});
    });
    if (repeated) return again(first, repeated);
    const adopted = unrecordedPromotion(store, first, d);
    if (adopted) {
      // A run cut short between its promotion and its receipt: promote finishes the move (mirrors, lifecycles), the
      // receipt records it.
      await promote({
        knowledge: options.knowledge,
        scenario: store.scenario,
        candidate: d.bundle_digest,
        rationale,
        actor,
        timeoutSeconds: options.timeoutSeconds,
        lockTimeout: options.lockTimeout,
        signingKey: options.signingKey,
        allowedSigners: options.allowedSigners,
        ...(options.now ? {now: options.now} : {}),
      });
      return commit(() => ({from: 'CANARY', blockers: [], deprecate: adopted.deprecate}), adopted.promotion_id, true);
    }
    const pre = decide(first, d, to, null);
    if (pre.blockers.length > 0) return commit((view) => decide(view, d, to, null), null, false);
    let promotionId: string | null;
    try {
      const promoted = await promote({
        knowledge: options.knowledge,
        scenario: store.scenario,
        candidate: d.bundle_digest,
        rationale,
        actor,
        timeoutSeconds: options.timeoutSeconds,
        lockTimeout: options.lockTimeout,
        signingKey: options.signingKey,
        allowedSigners: options.allowedSigners,
        ...(options.now ? {now: options.now} : {}),
      });
      if (promoted.status === 'rejected') {
        return commit(
          (view) => ({
            ...decide(view, d, to, null),
            blockers: [{code: 'PROMOTION_REJECTED', detail: promoted.reason ?? 'promote rejected the candidate'}],
          }),
          null,
          false,
        );
      }
      promotionId = promoted.promotion_id;
    } catch (error) {
      // promote's refusal is this transition's blocker: recorded, then promote's own error and exit code.
      if (
        error instanceof AutoctxError &&
        [2, 3, 5, 6, 8].includes(error.exitCode) &&
        error.code !== 'STALE_REGISTRY'
      ) {
        await commit(
          (view) => ({...decide(view, d, to, null), blockers: [{code: error.code, detail: error.message}]}),
          null,
          false,
        );
      }
      throw error;
    }
    // The pointer moved: the release is ACTIVE by active.json; the receipt records the move and the release it
    // deprecated.
    return commit(() => ({from: 'CANARY', blockers: [], deprecate: pre.deprecate}), promotionId, true);
  }
  pausePoint('transition:before-commit');
  return commit((view) => decide(view, d, to, evidence), null, false);
}

/**
 * The same transition run again after it was done (a re-run after a crash,
 * or a script that repeats itself): the newest receipt of the scope applied
 * it, with the same request and rationale, and nothing has changed since.
 * It is answered as it was; nothing is written.
 */
function repeatOf(
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
function unrecordedPromotion(
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
