/** `autoctx release transition`: one gate for every state change of a release in a scope. */
import {AutoctxError, fail} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {
  assertVersionName,
  canonicalState,
  GLOBAL_SCOPE,
  normalizeScope,
  RELEASE_STATES,
  STATE_ALIASES,
  type Blocker,
  type Registry,
  type ReleaseDescriptor,
  type ReleaseState,
  type TransitionReceipt,
} from '../../model/release/release.js';
import {applyTransition, type SettingsChange} from '../../model/release/release-gate.js';
import type {ScenarioStore} from '../../store/index.js';
import {pausePoint} from '../../store/index.js';
import {createReceipt} from '../../store/kinds/release/release-receipt.js';
import {settleRegistry, swapRegistry, type RegistryState} from '../../store/kinds/release/release-registry.js';
import {prepareSigning, signingInputs} from '../signing/signing.js';
import {requireSignedSeal} from '../signing/trust-gates.js';
import {resolveActor} from '../common/actor.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {canaryEvidence, promote} from '../promotion/promote.js';
import {requireUndiverged} from '../promotion/pointer-move.js';
import {nextReceipt, normalized, readRelease, scopeView, type ScopeView} from './registry-view.js';
import {nonBlankList, parseExpect, staleIfMoved} from './release-input.js';
import {
  decide,
  needsEvidence,
  rejectedBlocker,
  repeatOf,
  unrecordedPromotion,
  type Decision,
} from './transition-decision.js';

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
      `unknown state ${JSON.stringify(options.to)}: one of ${RELEASE_STATES.join(', ')} (older names ` +
        `accepted: ${Object.keys(STATE_ALIASES).join(', ')})`,
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
      `--canary-percent, --canary-tenants, --canary-resource-families and --canary-salt set a canary; this ` +
        `transition is to ${to}`,
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
  // A tree two clones' merged histories left (a fork in the receipts, or the pointer's divergences) changes no further:
  // DIVERGED, before anything is decided or written, and again under the lock.
  requireUndiverged(store);
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
      requireUndiverged(store);
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
      requireUndiverged(store);
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
