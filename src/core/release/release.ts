import {createHash} from 'node:crypto';
import path from 'node:path';
import {jsonEqual} from '../../canonical/index.js';
import {AutoctxError, fail} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {
  assertVersionName,
  descriptorDigest,
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
import {pausePoint, readFixtures} from '../../store/index.js';
import {readInputFile} from '../../store/io/input-files.js';
import {createDescriptor, listDescriptorKeys, readDescriptor} from '../../store/kinds/release/release-descriptor.js';
import {createReceipt, listReleaseScopes} from '../../store/kinds/release/release-receipt.js';
import {registryState, settleRegistry, swapRegistry, type RegistryState} from '../../store/kinds/release/release-registry.js';
import {prepareSigning, signingInputs} from '../signing/signing.js';
import {requireSignedSeal} from '../signing/trust-gates.js';
import {resolveActor} from '../common/actor.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {canaryEvidence, promote} from '../promotion/promote.js';
import {resolveDigest} from '../common/resolve.js';
import {rejectionOf} from './serving.js';
import {allDescriptors, globalChain, nextReceipt, normalized, readRelease, scopeActive, scopeView, scopeViews, stateIn, type ScopeView} from './registry-view.js';
import {hasServed} from '../../model/promotion/served.js';

export {nextReceipt, readRelease, scopeActive, scopeView, stateIn, type ScopeView} from './registry-view.js';

const DIGEST = /^[0-9a-f]{64}$/;

// ---- release name ----

export interface NameOptions extends StoreOptions {
  version: string;
  digest: string;
  parentVersion?: string | undefined;
  rollbackTargets?: string[] | undefined;
  vocabularyVersion?: string | undefined;
  compatibleVocabularies?: string[] | undefined;
  modelProfiles?: string[] | undefined;
  goldenInputs?: string[] | undefined;
  scope?: string | undefined;
  actor?: string | undefined;
}

export interface NameResult {
  status: 'named';
  scenario: string;
  version: string;
  bundle_digest: string;
  already_named: boolean;
  descriptor: ReleaseDescriptor;
}

function nonBlankList(values: string[] | undefined, flag: string): string[] {
  const out = (values ?? []).map((v) => {
    if (typeof v !== 'string' || v.trim() === '' || /[\u0000-\u001f\u007f]/.test(v) || v.length > 200) fail('USAGE', `${flag} takes non-blank one-line values of at most 200 characters, not ${JSON.stringify(String(v).slice(0, 40))}`);
    return v.trim();
  });
  const seen = new Set<string>();
  for (const v of out) {
    if (seen.has(v)) fail('USAGE', `${flag} names ${JSON.stringify(v)} twice`);
    seen.add(v);
  }
  return out;
}

function goldenInput(file: string): {name: string; sha256: string; bytes: number} {
  readFixtures(file); // a fixtures file as evaluate reads it: one JSON fixture per line
  const bytes = readInputFile(file, true);
  return {name: path.basename(file), sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length};
}

/** `autoctx release name VERSION DIGEST`: an immutable descriptor, every rule checked before anything is locked or written. */
export async function releaseName(options: NameOptions): Promise<NameResult> {
  assertVersionName(options.version);
  if (options.parentVersion !== undefined) assertVersionName(options.parentVersion, 'parent version');
  const targets = nonBlankList(options.rollbackTargets, '--rollback-target');
  for (const t of targets) assertVersionName(t, 'rollback target');
  if (new Set(targets.map(versionKey)).size !== targets.length) fail('USAGE', '--rollback-target names one version twice (names are compared case-insensitively)');
  if (targets.some((t) => versionKey(t) === versionKey(options.version))) fail('USAGE', `release ${options.version} cannot be its own rollback target`);
  if (options.parentVersion !== undefined && versionKey(options.parentVersion) === versionKey(options.version)) fail('USAGE', `release ${options.version} cannot be its own parent`);
  const vocabulary = options.vocabularyVersion === undefined ? null : nonBlankList([options.vocabularyVersion], '--vocabulary-version')[0]!;
  const compatible = nonBlankList(options.compatibleVocabularies, '--compatible-vocabulary');
  const profiles = nonBlankList(options.modelProfiles, '--model-profile');
  const golden = (options.goldenInputs ?? []).map(goldenInput);
  const scope = normalizeScope(options.scope);
  lockTimeout(options);
  const store = openScenario(options);
  const actor = resolveActor(options.actor, store.paths.dir);
  const digest = resolveDigest(store, options.digest);
  store.requireBundle(digest);
  return store.withLock(lockTimeout(options), () => {
    const existing = readDescriptor(store, options.version);
    const descriptors = allDescriptors(store);
    const byKey = (v: string) => descriptors.find((d) => versionKey(d.version) === versionKey(v));
    if (options.parentVersion !== undefined && !byKey(options.parentVersion)) fail('VERSION_NOT_FOUND', `parent version ${options.parentVersion} has no descriptor in scenario "${store.scenario}"`, {version: options.parentVersion});
    const chain = globalChain(store);
    const scopeState = scope === GLOBAL_SCOPE ? null : registryState(store, scope);
    for (const t of targets) {
      const target = byKey(t);
      if (!target) fail('VERSION_NOT_FOUND', `rollback target ${t} has no descriptor in scenario "${store.scenario}"`, {version: t});
      if (!hasServed(scope, target, {chain, receipts: scopeState?.receipts ?? []})) fail('ROLLBACK_TARGET_NOT_SERVED', `rollback target ${t} has never served in scope ${scope}: ${scope === GLOBAL_SCOPE ? `no recorded pointer move made bundle ${target.bundle_digest} active` : 'no applied transition made it ACTIVE there'}`, {version: t});
    }
    const body: Omit<ReleaseDescriptor, 'digest'> = {
      schema_version: 1,
      scenario: store.scenario,
      version: options.version,
      bundle_digest: digest,
      parent_version: options.parentVersion === undefined ? null : byKey(options.parentVersion)!.version,
      rollback_targets: targets.map((t) => byKey(t)!.version),
      rollback_scope: scope,
      vocabulary_version: vocabulary,
      compatible_vocabularies: compatible,
      model_profiles: profiles,
      golden_inputs: golden,
      actor,
      created_at: isoTimestamp(now(options)),
    };
    const descriptor: ReleaseDescriptor = {...body, digest: descriptorDigest(body)};
    if (existing) {
      // The same name again: the same descriptor (but for who and when) is the run before, answered as it was; anything else is refused.
      const same = jsonEqual({...existing, actor: '', created_at: '', digest: ''} as never, {...descriptor, actor: '', created_at: '', digest: ''} as never);
      if (same) return {status: 'named', scenario: store.scenario, version: existing.version, bundle_digest: digest, already_named: true, descriptor: existing};
      fail('VERSION_EXISTS', `release ${existing.version} already exists${existing.version !== options.version ? ` (names are compared case-insensitively: ${options.version} is ${existing.version})` : ''}, naming bundle ${existing.bundle_digest}; descriptors are immutable, give the new one another name`, {version: existing.version});
    }
    const named = descriptors.find((d) => d.bundle_digest === digest);
    if (named) fail('DIGEST_ALREADY_NAMED', `bundle ${digest} is already release ${named.version}; a bundle has one release name`, {version: named.version});
    createDescriptor(store, descriptor);
    return {status: 'named', scenario: store.scenario, version: descriptor.version, bundle_digest: digest, already_named: false, descriptor};
  });
}

// ---- show, list, history ----

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
    return {version: d.version, bundle_digest: d.bundle_digest, state, canary: state === 'CANARY' ? (entry?.canary ?? null) : null, shadow: state === 'SHADOW' ? (entry?.shadow ?? null) : null, runnable: isRunnable(view.state.registry, d.version)};
  });
  return {scope, registry_digest: view.state.digest, registry_pending: view.state.pending !== null, active: scopeActive(view), releases, runnable: view.state.registry.runnable, receipts: view.state.receipts.length};
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

/** What status shows of releases: each scope that has any, or the global ACTIVE's name when releases exist. */
export function releaseStatus(store: ScenarioStore): ScopeSummary[] {
  if (listDescriptorKeys(store).length === 0 && listReleaseScopes(store).length === 0) return [];
  return scopeViews(store, releaseScopes(store)).map(summarize);
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
  const states = scopeViews(store, releaseScopes(store)).map((view) => ({scope: view.state.scope, state: stateIn(view, descriptor)}));
  return {status: 'ok', scenario: store.scenario, descriptor, states};
}

export interface HistoryResult {
  status: 'ok';
  scenario: string;
  receipts: TransitionReceipt[];
}

/** Every receipt, applied and blocked, of one scope or all, in order (scope, then number). Readers drop the registry copy each applied one carries. */
export function releaseHistory(options: StoreOptions & {scope?: string | undefined; version?: string | undefined}): HistoryResult {
  const only = options.scope === undefined ? undefined : normalizeScope(options.scope);
  if (options.version !== undefined) assertVersionName(options.version);
  const store = openScenario(options);
  const receipts = (only !== undefined ? [only] : releaseScopes(store))
    .flatMap((s) => registryState(store, s).receipts)
    .filter((r) => options.version === undefined || (r.version !== null && versionKey(r.version) === versionKey(options.version)));
  return {status: 'ok', scenario: store.scenario, receipts};
}

// ---- transition ----

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

function parseExpect(given: string | undefined): string | null | undefined {
  if (given === undefined) return undefined;
  const v = given.trim().toLowerCase();
  if (v === 'none') return null;
  if (!DIGEST.test(v)) fail('INVALID_DIGEST', `--expect-registry takes the registry's full digest (64 hex characters, as release list --json shows it) or "none", not ${JSON.stringify(given)}`);
  return v;
}

/** Every flag of a transition, validated before anything is read, locked or written. */
function checkTransition(options: TransitionOptions): {to: ReleaseState; scope: string; expect: string | null | undefined; settings: SettingsChange} {
  assertVersionName(options.version);
  if (typeof options.rationale !== 'string' || options.rationale.trim() === '') fail('USAGE', 'a transition needs a non-blank --rationale');
  const to = canonicalState(options.to);
  if (to === null) fail('INVALID_INPUT', `unknown state ${JSON.stringify(options.to)}: one of ${RELEASE_STATES.join(', ')} (older names accepted: ${Object.keys(STATE_ALIASES).join(', ')})`);
  const scope = normalizeScope(options.scope);
  const expect = parseExpect(options.expectRegistry);
  const canary = options.canaryBasisPoints !== undefined || options.canaryTenants !== undefined || options.canaryResourceFamilies !== undefined || options.canarySalt !== undefined;
  const shadow = options.shadowBasisPoints !== undefined || options.shadowDailyCap !== undefined;
  if (canary && to !== 'CANARY') fail('USAGE', `--canary-percent, --canary-tenants, --canary-resource-families and --canary-salt set a canary; this transition is to ${to}`);
  if (shadow && to !== 'SHADOW') fail('USAGE', `--shadow-percent and --shadow-daily-cap set a shadow run; this transition is to ${to}`);
  if (options.shadowDailyCap !== undefined && (!Number.isSafeInteger(options.shadowDailyCap) || options.shadowDailyCap < 0)) fail('USAGE', '--shadow-daily-cap must be a whole number, 0 or more');
  const settings: SettingsChange = {};
  if (canary) {
    settings.canary = {
      ...(options.canaryBasisPoints !== undefined ? {basis_points: options.canaryBasisPoints} : {}),
      ...(options.canaryTenants !== undefined ? {tenants: nonBlankList(options.canaryTenants, '--canary-tenants')} : {}),
      ...(options.canaryResourceFamilies !== undefined ? {resource_families: nonBlankList(options.canaryResourceFamilies, '--canary-resource-families')} : {}),
      ...(options.canarySalt !== undefined ? {salt: nonBlankList([options.canarySalt], '--canary-salt')[0]!} : {}),
    };
  }
  if (shadow) settings.shadow = {...(options.shadowBasisPoints !== undefined ? {basis_points: options.shadowBasisPoints} : {}), ...(options.shadowDailyCap !== undefined ? {daily_cap: options.shadowDailyCap} : {})};
  return {to, scope, expect, settings};
}

function staleIfMoved(expect: string | null | undefined, digest: string | null, scope: string): void {
  if (expect !== undefined && expect !== digest) fail('STALE_REGISTRY', `the registry of scope ${scope} is ${digest ?? 'not written yet (none)'}, not ${expect ?? 'none'}: another transition went first; nothing was written`, {scope, registry: digest});
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
  const blockers = releaseGate({scope: view.state.scope, version: d.version, from, to, runnable: isRunnable(view.state.registry, d.version), evidence, otherActive});
  // Only the scope's own ACTIVE is deprecated: a scope without one falls back to the global ACTIVE, which it does not own.
  const own = view.state.scope === GLOBAL_SCOPE ? active.version : (Object.values(view.state.registry.releases).find((r) => r.state === 'ACTIVE')?.version ?? null);
  const deprecate = to === 'ACTIVE' && own !== null && otherActive ? [own] : [];
  return {from, blockers, deprecate};
}

/** The blocker for a transition that would make a rejected bundle serve (to SHADOW, CANARY or ACTIVE), or null. The global ACTIVE's is promote's own refusal. */
function rejectedBlocker(store: ScenarioStore, d: ReleaseDescriptor, to: ReleaseState, scope: string): Blocker | null {
  if ((to !== 'SHADOW' && to !== 'CANARY' && to !== 'ACTIVE') || (to === 'ACTIVE' && scope === GLOBAL_SCOPE)) return null;
  const why = rejectionOf(store, d.bundle_digest);
  return why === null ? null : {code: 'CANDIDATE_REJECTED', detail: `${why}: a rejected bundle never serves, as ${to} or otherwise`};
}

/** Whether a target needs the canary evidence: CANARY, and ACTIVE outside the global scope unless the bundle served globally. Dry runs of the global ACTIVE check it too (promote's gates, without the swap). */
function needsEvidence(view: ScopeView, d: ReleaseDescriptor, to: ReleaseState, dryRun: boolean): boolean {
  if (to === 'CANARY') return true;
  if (to !== 'ACTIVE') return false;
  if (view.state.scope === GLOBAL_SCOPE) return dryRun;
  return !view.served.has(d.bundle_digest);
}

function receiptFor(store: ScenarioStore, state: RegistryState, t: {d: ReleaseDescriptor; requested: string; to: ReleaseState; decision: Decision; actor: string; at: string; rationale: string; next: Registry | null; promotionId: string | null}): TransitionReceipt {
  return nextReceipt(store, state, {
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
  }, t.next);
}

function resultOf(store: ScenarioStore, r: TransitionReceipt | null, f: {d: ReleaseDescriptor; scope: string; requested: string; to: ReleaseState; decision: Decision; before: string | null; dryRun: boolean}): TransitionResult {
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
  // In a signed tree every applied receipt is signed by the actor's key, and every step chained (a blocked receipt is not signed itself).
  const signing = dryRun ? null : prepareSigning(store, options, {actor, role: 'sign'}, inputs);
  const d = readRelease(store, options.version);
  // CANARY serves real sessions: in a signed tree its evidence must be signed, as promote requires for ACTIVE.
  if (signing?.trust && to === 'CANARY') requireSignedSeal(store, signing.trust, d.bundle_digest);
  const first = scopeView(store, scope);
  staleIfMoved(expect, first.state.digest, scope);
  const evidence = needsEvidence(first, d, to, dryRun) ? await canaryEvidence(store, d.bundle_digest, {timeoutSeconds: options.timeoutSeconds}) : null;
  if (dryRun) {
    const decision = decide(first, d, to, evidence);
    const rejected = rejectedBlocker(store, d, to, scope);
    if (rejected) decision.blockers.unshift(rejected);
    if (to === 'ACTIVE' && scope === GLOBAL_SCOPE && evidence && decision.blockers.length === 0) decision.blockers.push(evidence);
    return resultOf(store, null, {d, scope, requested, to, decision, before: first.state.digest, dryRun});
  }
  const at = () => isoTimestamp(now(options));
  /** Under the lock: complete a change cut short, re-check the swap, decide, write the receipt, then the registry. */
  const again = (view: ScopeView, r: TransitionReceipt) => resultOf(store, r, {d, scope, requested, to, decision: {from: r.from_state!, blockers: [], deprecate: r.deprecated_versions}, before: r.registry_before, dryRun});
  const commit = (decide_: (view: ScopeView) => Decision, promotionId: string | null, afterPromotion: boolean) =>
    store.withLock(lockTimeout(options), () => {
      const view = scopeView(store, scope);
      settleRegistry(store, view.state);
      // With --expect-registry the script's expectation decides: a registry that moved is STALE_REGISTRY, even for the same request.
      if (!afterPromotion) staleIfMoved(expect, view.state.digest, scope);
      const repeated = repeatOf(view, d, {requested, to, rationale, settings});
      if (repeated) return again(view, repeated);
      const decision = decide_(view);
      // A rejected bundle never serves: decided here, under the lock, where no rejection is half done (a reject may have run since the evidence was read).
      // It is named first, whatever else blocks (a rejection that ended the release leaves it in a state the table does not move on from).
      const rejected = rejectedBlocker(store, d, to, scope);
      if (rejected) decision.blockers.unshift(rejected);
      const next = decision.blockers.length === 0 ? normalized(applyTransition(view.state.registry, {version: d.version, to, settings, deprecate: decision.deprecate}), view) : null;
      const receipt = receiptFor(store, view.state, {d, requested, to, decision, actor, at: at(), rationale, next, promotionId});
      createReceipt(store, receipt);
      if (receipt.registry) swapRegistry(store, scope, view.state.digest, receipt.registry);
      return resultOf(store, receipt, {d, scope, requested, to, decision, before: view.state.digest, dryRun});
    });
  if (to === 'ACTIVE' && scope === GLOBAL_SCOPE) {
    // The same transition done before (its receipt written; a registry cut short is completed first): answered as it was.
    const repeated = await store.withLock(lockTimeout(options), () => {
      const view = scopeView(store, scope);
      settleRegistry(store, view.state);
      staleIfMoved(expect, view.state.digest, scope);
      return repeatOf(view, d, {requested, to, rationale, settings});
    });
    if (repeated) return again(first, repeated);
    const adopted = unrecordedPromotion(store, first, d);
    if (adopted) {
      // A run cut short between its promotion and its receipt: promote finishes the move (mirrors, lifecycles), the receipt records it.
      await promote({knowledge: options.knowledge, scenario: store.scenario, candidate: d.bundle_digest, rationale, actor, timeoutSeconds: options.timeoutSeconds, lockTimeout: options.lockTimeout, signingKey: options.signingKey, allowedSigners: options.allowedSigners, ...(options.now ? {now: options.now} : {})});
      return commit(() => ({from: 'CANARY', blockers: [], deprecate: adopted.deprecate}), adopted.promotion_id, true);
    }
    const pre = decide(first, d, to, null);
    if (pre.blockers.length > 0) return commit((view) => decide(view, d, to, null), null, false);
    let promotionId: string | null;
    try {
      const promoted = await promote({knowledge: options.knowledge, scenario: store.scenario, candidate: d.bundle_digest, rationale, actor, timeoutSeconds: options.timeoutSeconds, lockTimeout: options.lockTimeout, signingKey: options.signingKey, allowedSigners: options.allowedSigners, ...(options.now ? {now: options.now} : {})});
      if (promoted.status === 'rejected') {
        return commit((view) => ({...decide(view, d, to, null), blockers: [{code: 'PROMOTION_REJECTED', detail: promoted.reason ?? 'promote rejected the candidate'}]}), null, false);
      }
      promotionId = promoted.promotion_id;
    } catch (error) {
      // promote's refusal is this transition's blocker: recorded, then promote's own error and exit code.
      if (error instanceof AutoctxError && [2, 3, 5, 6, 8].includes(error.exitCode) && error.code !== 'STALE_REGISTRY') {
        await commit((view) => ({...decide(view, d, to, null), blockers: [{code: error.code, detail: error.message}]}), null, false);
      }
      throw error;
    }
    // The pointer moved: the release is ACTIVE by active.json; the receipt records the move and the release it deprecated.
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
function repeatOf(view: ScopeView, d: ReleaseDescriptor, t: {requested: string; to: ReleaseState; rationale: string; settings: SettingsChange}): TransitionReceipt | null {
  const last = view.state.receipts.at(-1);
  if (!last || !last.applied || last.action !== 'transition' || last.version === null || versionKey(last.version) !== versionKey(d.version)) return null;
  if (last.requested_state !== t.requested || last.target_state !== t.to || last.rationale !== t.rationale || view.state.digest !== last.registry_after) return null;
  if (stateIn(view, d) !== t.to) return null;
  const unchanged = applyTransition(view.state.registry, {version: d.version, to: t.to, settings: t.settings, deprecate: []});
  return jsonEqual(normalized(unchanged, view).releases as never, view.state.registry.releases as never) ? last : null;
}

/**
 * The global ACTIVE's promotion made but not recorded (a transition cut short
 * after promote): active.json names this release's bundle through a
 * promotion, the registry still holds it as CANARY, and no receipt names that
 * promotion.
 */
function unrecordedPromotion(store: ScenarioStore, view: ScopeView, d: ReleaseDescriptor): {promotion_id: string; deprecate: string[]} | null {
  const active = store.requireActive();
  if (active.bundle_digest !== d.bundle_digest || active.promotion_id === null) return null;
  if (view.state.registry.releases[versionKey(d.version)]?.state !== 'CANARY') return null;
  if (view.state.receipts.some((r) => r.promotion_id === active.promotion_id)) return null;
  const promotion = store.readPromotion(active.promotion_id);
  if (!promotion || promotion.candidate_digest !== d.bundle_digest) return null;
  const before = view.descriptors.find((x) => x.bundle_digest === promotion.incumbent_digest);
  return {promotion_id: active.promotion_id, deprecate: before ? [before.version] : []};
}

// ---- runnable set ----

export interface RunnableOptions extends StoreOptions {
  signingKey?: string | undefined;
  allowedSigners?: string | undefined;
  versions?: string[] | undefined;
  all?: boolean | undefined;
  defaultVersion?: string | undefined;
  rationale: string;
  scope?: string | undefined;
  expectRegistry?: string | undefined;
  actor?: string | undefined;
}

export interface RunnableResult {
  status: 'applied';
  scenario: string;
  scope: string;
  runnable: Registry['runnable'];
  receipt_seq: number;
  registry_before: string | null;
  registry_after: string;
}

/** `autoctx release runnable`: which versions this deployment can run (all, or a list) and its default; a receipt like any registry change. */
export async function releaseRunnable(options: RunnableOptions): Promise<RunnableResult> {
  if (typeof options.rationale !== 'string' || options.rationale.trim() === '') fail('USAGE', 'a runnable-set change needs a non-blank --rationale');
  const list = options.versions ?? [];
  if (options.all === true && list.length > 0) fail('USAGE', 'give either versions or --all, not both');
  if (options.all !== true && list.length === 0) fail('USAGE', 'name the runnable versions, or give --all');
  for (const v of list) assertVersionName(v);
  if (new Set(list.map(versionKey)).size !== list.length) fail('USAGE', 'a version is named twice (names are compared case-insensitively)');
  if (options.defaultVersion !== undefined) assertVersionName(options.defaultVersion, 'default version');
  if (options.defaultVersion !== undefined && list.length > 0 && !list.some((v) => versionKey(v) === versionKey(options.defaultVersion!))) fail('USAGE', `--default ${options.defaultVersion} is not among the runnable versions`);
  const scope = normalizeScope(options.scope);
  const expect = parseExpect(options.expectRegistry);
  lockTimeout(options);
  const inputs = signingInputs(options);
  const store = openScenario(options);
  const actor = resolveActor(options.actor, store.paths.dir);
  // In a signed tree the receipt is signed by the actor's key, like every applied receipt.
  prepareSigning(store, options, {actor, role: 'sign'}, inputs);
  const canonical = (v: string) => readRelease(store, v).version;
  const versions = options.all === true ? null : list.map(canonical);
  const defaultVersion = options.defaultVersion === undefined ? null : canonical(options.defaultVersion);
  staleIfMoved(expect, registryState(store, scope).digest, scope);
  return store.withLock(lockTimeout(options), () => {
    const state = registryState(store, scope);
    settleRegistry(store, state);
    staleIfMoved(expect, state.digest, scope);
    const last = state.receipts.at(-1);
    // The same change run again (after a crash, say): the newest receipt made it and nothing changed since; answered as it was.
    if (last?.action === 'runnable' && last.rationale === options.rationale.trim() && last.registry_after === state.digest && jsonEqual(last.registry!.runnable as never, {versions, default_version: defaultVersion} as never)) {
      return {status: 'applied', scenario: store.scenario, scope, runnable: last.registry!.runnable, receipt_seq: last.seq, registry_before: last.registry_before, registry_after: last.registry_after!};
    }
    const seq = state.receipts.length + 1;
    const next: Registry = {...state.registry, runnable: {versions, default_version: defaultVersion}};
    const receipt = nextReceipt(
      store,
      state,
      {action: 'runnable', version: null, bundle_digest: null, actor, at: isoTimestamp(now(options)), from_state: null, requested_state: null, target_state: null, applied: true, blockers: [], rationale: options.rationale.trim(), deprecated_versions: [], promotion_id: null},
      next,
    );
    createReceipt(store, receipt);
    swapRegistry(store, scope, state.digest, receipt.registry!);
    return {status: 'applied', scenario: store.scenario, scope, runnable: receipt.registry!.runnable, receipt_seq: seq, registry_before: state.digest, registry_after: receipt.registry_after!};
  });
}
