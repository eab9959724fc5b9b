import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../errors.js';
import {
  GLOBAL_SCOPE,
  assertVersionName,
  isRunnable,
  normalizeScope,
  versionKey,
  type ReleaseDescriptor,
} from '../../model/release/release.js';
import {applyTransition} from '../../model/release/release-gate.js';
import {isoTimestamp, type ActivePointer} from '../../model/promotion/records.js';
import {
  ROLLBACK_CONDITIONS,
  executionKey,
  executionPointer,
  type Condition,
  type ConditionCode,
  type RollbackExecution,
  type StoredStatus,
} from '../../model/rollback/rollback-execution.js';
import type {ScenarioStore} from '../../store/index.js';
import {requireActive, activeDigest} from '../../store/kinds/promotion/active-pointer.js';
import {pointerHistory} from '../../store/kinds/promotion/pointer-moves.js';
import {readDescriptor} from '../../store/kinds/release/release-descriptor.js';
import {createReceipt} from '../../store/kinds/release/release-receipt.js';
import {settleRegistry, swapRegistry} from '../../store/kinds/release/release-registry.js';
import {createExecution, listExecutionKeys, readExecution} from '../../store/kinds/rollback/rollback-execution.js';
import {resolveActor} from '../common/actor.js';
import {prepareSigning, signingInputs} from '../signing/signing.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {finishPointerMove, movePointer, prepareMove, requireRecordedPointer} from '../promotion/pointer-move.js';
import {executionMove} from '../../model/promotion/pointer-history.js';
import {nextReceipt} from '../release/registry-view.js';
import {normalized, readRelease, scopeView, stateIn, type ScopeView} from '../release/registry-view.js';
import {hasServed, madeActive} from '../../model/promotion/served.js';
import {resolveDigest} from '../common/resolve.js';
import {readBundle, requireBundle} from '../../store/kinds/bundle/bundle.js';
import {listRollbackIds, readRollback} from '../../store/kinds/promotion/history.js';
import {writeMirrors} from '../../store/kinds/promotion/mirrors.js';
import {rejectionOf} from '../release/serving.js';

export interface RollbackOptions extends StoreOptions {
  rationale: string;
  /** A version the ACTIVE release's descriptor declares; absent: the recorded rollback target. */
  to?: string | undefined;
  scope?: string | undefined;
  emergency?: boolean | undefined;
  actor?: string | undefined;
  expectActive?: string | undefined;
}

export interface RollbackResult {
  status: 'rolled_back' | 'refused';
  scenario: string;
  scope: string;
  execution_key: string;
  /** The record's status: EXECUTED, AWAITING_APPROVAL (an emergency rollback) or REFUSED. */
  execution_status: StoredStatus;
  emergency: boolean;
  /** Kept for scripts written before the rollback service: the execution key (or an older record's id). */
  rollback_id: string;
  from_version: string | null;
  from_digest: string | null;
  to_version: string | null;
  bundle_digest: string | null;
  conditions: Condition[];
  /**
   * The same rollback found done (a re-run with --expect-active), or an interrupted one completed: nothing new was
   * decided.
   */
  already_done: boolean;
}

function condition(code: ConditionCode, passed: boolean, detail: string): Condition {
  return {code, passed, detail};
}

function resultOf(r: RollbackExecution, alreadyDone: boolean): RollbackResult {
  return {
    status: r.status === 'REFUSED' ? 'refused' : 'rolled_back',
    scenario: r.scenario,
    scope: r.scope,
    execution_key: r.execution_key,
    execution_status: r.status,
    emergency: r.emergency,
    rollback_id: r.execution_key,
    from_version: r.from_version,
    from_digest: r.from_digest,
    to_version: r.to_version,
    bundle_digest: r.to_digest,
    conditions: r.conditions,
    already_done: alreadyDone,
  };
}

interface Target {
  version: string | null;
  digest: string | null;
  declared: Condition;
}

interface Facts {
  view: ScopeView;
  fromVersion: string | null;
  fromDigest: string | null;
  fromOk: Condition;
  target: Target;
  /** The global pointer's history (empty outside the global scope, where the receipts tell what served). */
  chain: readonly {to: string}[];
}

/** The target's own conditions: served, not retired, not rejected, verifies, runnable. */
function targetConditions(store: ScenarioStore, f: Facts): {conditions: Condition[]; epoch: string | null} {
  const {view, target} = f;
  if (target.digest === null) {
    const none = 'there is no target to check';
    return {
      conditions: [
        condition('TARGET_SERVED', false, none),
        condition('TARGET_NOT_RETIRED', false, none),
        condition('TARGET_NOT_REJECTED', false, none),
        condition('TARGET_VERIFIES', false, none),
        condition('TARGET_RUNNABLE', false, none),
      ],
      epoch: null,
    };
  }
  const label = target.version ?? `the unnamed bundle ${target.digest.slice(0, 12)}`;
  const served = hasServed(
    view.state.scope,
    {version: target.version, bundle_digest: target.digest},
    {chain: f.chain, receipts: view.state.receipts},
  );
  const out: Condition[] = [
    condition(
      'TARGET_SERVED',
      served,
      served
        ? `${label} has served in scope ${view.state.scope}`
        : `${label} has never served in scope ${view.state.scope}`,
    ),
  ];
  let descriptor: ReleaseDescriptor | null = null;
  let verifies = true;
  let why = `bundle ${target.digest.slice(0, 12)} verifies`;
  let epoch: string | null = null;
  try {
    const bundle = readBundle(store, target.digest);
    if (!bundle) fail('DIGEST_NOT_FOUND', `bundle ${target.digest} is missing from bundles/`);
    epoch = bundle.evaluator_epoch;
    if (target.version !== null) {
      descriptor = readRelease(store, target.version);
      why += ` and so does its descriptor`;
    }
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    verifies = false;
    why = (error as Error).message;
  }
  const state = descriptor ? stateIn(view, descriptor) : null;
  out.push(
    condition(
      'TARGET_NOT_RETIRED',
      state !== 'RETIRED',
      state === null ? `${label} has no release state` : `${label} is ${state}`,
    ),
  );
  // A rejected bundle never serves: a rollback never makes one a scope's ACTIVE (the one definition of rejected).
  const rejected = rejectionOf(store, target.digest);
  out.push(condition('TARGET_NOT_REJECTED', rejected === null, rejected ?? `${label} is not rejected`));
  out.push(condition('TARGET_VERIFIES', verifies, why));
  const runnable =
    target.version !== null
      ? isRunnable(view.state.registry, target.version)
      : view.state.registry.runnable.versions === null;
  out.push(
    condition(
      'TARGET_RUNNABLE',
      runnable,
      runnable
        ? `${label} is runnable in scope ${view.state.scope}`
        : `${label} is not in the runnable set of scope ${view.state.scope}`,
    ),
  );
  return {conditions: out, epoch};
}

/** With --to: the version must be one the ACTIVE release's descriptor declares for this scope. */
function declaredTarget(view: ScopeView, to: string, fromVersion: string | null, store: ScenarioStore): Target {
  const d = readDescriptor(store, to)!;
  const from =
    fromVersion === null
      ? null
      : (view.descriptors.find((x) => versionKey(x.version) === versionKey(fromVersion)) ?? null);
  let declared: Condition;
  if (!from)
    declared = condition(
      'TARGET_DECLARED',
      false,
      `the ACTIVE bundle is no named release, so no descriptor declares ${d.version}`,
    );
  else if (!from.rollback_targets.some((t) => versionKey(t) === versionKey(to)))
    declared = condition(
      'TARGET_DECLARED',
      false,
      `${from.version} declares ${from.rollback_targets.length ? from.rollback_targets.join(', ') : 'no rollback target'}, not ${d.version}`,
    );
  else if (from.rollback_scope !== view.state.scope)
    declared = condition(
      'TARGET_DECLARED',
      false,
      `${from.version} declares its rollback targets for scope ${from.rollback_scope}, not ${view.state.scope}`,
    );
  else declared = condition('TARGET_DECLARED', true, `${from.version} declares ${d.version}`);
  return {version: d.version, digest: d.bundle_digest, declared};
}

/**
 * A target that is what the scope serves now is no rollback: it has served (it serves), but nothing declares it as
 * somewhere to go back to.
 */
function notServing(target: Target, serving: string | null, scope: string): Target {
  if (target.digest === null || target.digest !== serving) return target;
  const label = target.version ?? `the unnamed bundle ${target.digest.slice(0, 12)}`;
  return {
    ...target,
    declared: condition(
      'TARGET_DECLARED',
      false,
      `${label} is what scope ${scope} serves now: a rollback restores another release`,
    ),
  };
}

function nameOf(view: ScopeView, digest: string | null): string | null {
  return digest === null ? null : (view.descriptors.find((x) => x.bundle_digest === digest)?.version ?? null);
}

function decideGlobal(store: ScenarioStore, view: ScopeView, active: ActivePointer, to: string | undefined): Facts {
  const chain = pointerHistory(store, active).chain;
  const fromVersion = nameOf(view, active.bundle_digest);
  let target: Target;
  if (to !== undefined) target = declaredTarget(view, to, fromVersion, store);
  else if (active.rollback_target_digest === null)
    target = {
      version: null,
      digest: null,
      declared: condition(
        'TARGET_DECLARED',
        false,
        `active.json records no rollback target for ${active.bundle_digest.slice(0, 12)}`,
      ),
    };
  else {
    const digest = active.rollback_target_digest;
    target = {
      version: nameOf(view, digest),
      digest,
      declared: condition('TARGET_DECLARED', true, `active.json records ${digest.slice(0, 12)} as the rollback target`),
    };
  }
  return {
    view,
    fromVersion,
    fromDigest: active.bundle_digest,
    fromOk: condition(
      'FROM_IS_ACTIVE',
      true,
      `${fromVersion ?? 'the unnamed bundle'} ${active.bundle_digest.slice(0, 12)} is what active.json serves`,
    ),
    target: notServing(target, active.bundle_digest, view.state.scope),
    chain,
  };
}

/** A scope's own ACTIVE release, and the release its ACTIVE receipt deprecated (its recorded rollback target). */
function decideScoped(store: ScenarioStore, view: ScopeView, to: string | undefined): Facts {
  const own = Object.values(view.state.registry.releases).find((r) => r.state === 'ACTIVE') ?? null;
  const from = own ? (view.descriptors.find((x) => versionKey(x.version) === versionKey(own.version)) ?? null) : null;
  const scope = view.state.scope;
  const fromOk = from
    ? condition('FROM_IS_ACTIVE', true, `${from.version} is ACTIVE in scope ${scope}`)
    : condition(
        'FROM_IS_ACTIVE',
        false,
        `scope ${scope} has no ACTIVE release of its own (it serves the global ACTIVE; roll that back in scope global)`,
      );
  let target: Target;
  if (to !== undefined) target = declaredTarget(view, to, from?.version ?? null, store);
  else {
    const made = from ? [...view.state.receipts].reverse().find((r) => madeActive(r, from.version)) : undefined;
    const previous = made?.deprecated_versions[0];
    const d =
      previous !== undefined ? view.descriptors.find((x) => versionKey(x.version) === versionKey(previous)) : undefined;
    target = d
      ? {
          version: d.version,
          digest: d.bundle_digest,
          declared: condition(
            'TARGET_DECLARED',
            true,
            `receipt ${made!.seq} made ${from!.version} ACTIVE in place of ${d.version}`,
          ),
        }
      : {
          version: null,
          digest: null,
          declared: condition(
            'TARGET_DECLARED',
            false,
            from
              ? `no receipt records what ${from.version} replaced in scope ${scope}`
              : `scope ${scope} has no ACTIVE release to roll back`,
          ),
        };
  }
  return {
    view,
    fromVersion: from?.version ?? null,
    fromDigest: from?.bundle_digest ?? null,
    fromOk,
    target: notServing(target, from?.bundle_digest ?? null, scope),
    chain: [],
  };
}

/**
 * The executed record whose move has not happened yet: a crash after the record, before the pointer or the registry.
 */
function interrupted(
  store: ScenarioStore,
  scope: string,
  at: {active?: ActivePointer; view?: ScopeView},
): RollbackExecution | null {
  for (const key of listExecutionKeys(store).reverse()) {
    const r = readExecution(store, key);
    if (!r || r.scope !== scope || r.status === 'REFUSED') continue;
    if (
      scope === GLOBAL_SCOPE &&
      at.active &&
      r.from_digest === at.active.bundle_digest &&
      r.from_activated_at === at.active.activated_at
    )
      return r;
    if (
      scope !== GLOBAL_SCOPE &&
      at.view &&
      r.registry_before === at.view.state.digest &&
      !at.view.state.receipts.some((x) => x.execution_key === r.execution_key)
    )
      return r;
  }
  return null;
}

/** The executed global rollback that wrote the current pointer, moving away from `from`. */
function completedFrom(
  store: ScenarioStore,
  from: string,
  active: ActivePointer,
): {key: string; record: RollbackExecution | null} | null {
  for (const key of listExecutionKeys(store)) {
    const r = readExecution(store, key);
    if (
      r &&
      r.scope === GLOBAL_SCOPE &&
      r.status !== 'REFUSED' &&
      r.from_digest === from &&
      r.to_digest === active.bundle_digest &&
      r.executed_at === active.activated_at
    )
      return {key, record: r};
  }
  for (const id of listRollbackIds(store)) {
    const r = readRollback(store, id);
    if (r && r.from_digest === from && r.to_digest === active.bundle_digest && r.rolled_back_at === active.activated_at)
      return {key: id, record: null};
  }
  return null;
}

function carryOut(
  store: ScenarioStore,
  r: RollbackExecution,
  view: ScopeView,
  expected: string | null,
  at: Date,
): void {
  if (r.scope === GLOBAL_SCOPE) {
    movePointer(store, {expected, pointer: executionPointer(r), bundle: requireBundle(store, r.to_digest!), at});
    return;
  }
  const next = normalized(
    applyTransition(view.state.registry, {
      version: r.to_version!,
      to: 'ACTIVE',
      settings: {},
      deprecate: r.from_version !== null ? [r.from_version] : [],
    }),
    view,
  );
  const receipt = nextReceipt(
    store,
    view.state,
    {
      action: 'rollback',
      execution_key: r.execution_key,
      version: r.to_version,
      bundle_digest: r.to_digest,
      actor: r.actor,
      at: r.executed_at,
      from_state: stateIn(view, view.descriptors.find((x) => versionKey(x.version) === versionKey(r.to_version!))!),
      requested_state: 'ACTIVE',
      target_state: 'ACTIVE',
      applied: true,
      blockers: [],
      rationale: r.rationale,
      deprecated_versions: r.from_version !== null ? [r.from_version] : [],
      promotion_id: null,
    },
    next,
  );
  createReceipt(store, receipt);
  swapRegistry(store, view.state.scope, view.state.digest, receipt.registry!);
}

/**
 * `autoctx rollback`: the one rollback service. Every flag is checked
 * first; then, under the scenario lock, the conditions are checked and the
 * execution recorded (refused ones too, exit 3), and an executed one moves
 * what serves: in the global scope the compare-and-swap of active.json, in
 * another its registry through a rollback receipt. An emergency rollback
 * executes the same way and awaits a second approver.
 */
export async function rollback(options: RollbackOptions): Promise<RollbackResult> {
  if (typeof options.rationale !== 'string') fail('USAGE', 'rollback needs --rationale');
  const scope = normalizeScope(options.scope);
  if (options.to !== undefined) assertVersionName(options.to, 'rollback target');
  lockTimeout(options);
  const inputs = signingInputs(options);
  const store = openScenario(options);
  const actor = resolveActor(options.actor, store.paths.dir);
  // In a signed tree the execution record (and a rollback receipt) is signed by the actor's key.
  prepareSigning(store, options, {actor, role: 'sign'}, inputs);
  if (options.to !== undefined && !readDescriptor(store, options.to))
    fail(
      'VERSION_NOT_FOUND',
      `scenario "${store.scenario}" has no release ${options.to} (autoctx release list shows them)`,
      {version: options.to},
    );
  const expected = options.expectActive !== undefined ? resolveDigest(store, options.expectActive) : undefined;
  const emergency = options.emergency === true;
  const rationale = options.rationale.trim();
  return store.withLock(lockTimeout(options), () => {
    const at = now(options);
    const active = requireActive(store);
    const view = scopeView(store, scope);
    if (scope === GLOBAL_SCOPE) {
      if (expected !== undefined && active.bundle_digest !== expected) {
        const done = completedFrom(store, expected, active);
        if (done) {
          writeMirrors(store, requireBundle(store, active.bundle_digest));
          finishPointerMove(store, active, at);
          if (done.record) return resultOf(done.record, true);
          return {
            status: 'rolled_back',
            scenario: store.scenario,
            scope,
            execution_key: done.key,
            execution_status: 'EXECUTED',
            emergency: false,
            rollback_id: done.key,
            from_version: null,
            from_digest: expected,
            to_version: null,
            bundle_digest: active.bundle_digest,
            conditions: [],
            already_done: true,
          };
        }
        fail('ACTIVE_MOVED', `expected ${expected} to be active, but the active bundle is ${active.bundle_digest}`, {
          active: active.bundle_digest,
        });
      }
      requireRecordedPointer(store, active);
      const cut = interrupted(store, scope, {active});
      if (cut) {
        carryOut(store, cut, view, activeDigest(store), at);
        return resultOf(cut, true);
      }
    } else {
      settleRegistry(store, view.state);
    }
    const settled = scope === GLOBAL_SCOPE ? view : scopeView(store, scope);
    if (scope !== GLOBAL_SCOPE) {
      const cut = interrupted(store, scope, {view: settled});
      if (cut) {
        carryOut(store, cut, settled, null, at);
        return resultOf(cut, true);
      }
    }
    const facts =
      scope === GLOBAL_SCOPE
        ? decideGlobal(store, settled, active, options.to)
        : decideScoped(store, settled, options.to);
    if (expected !== undefined && scope !== GLOBAL_SCOPE && facts.fromDigest !== expected) {
      // The same rollback done before (a re-run after a crash, or a script repeating itself): the newest receipt
      // carried it out.
      const last = settled.state.receipts.at(-1);
      const done = last?.execution_key !== undefined ? readExecution(store, last.execution_key) : null;
      if (done && done.from_digest === expected && done.to_digest === facts.fromDigest) return resultOf(done, true);
    }
    if (expected !== undefined && scope !== GLOBAL_SCOPE && facts.fromDigest !== expected)
      fail(
        'ACTIVE_MOVED',
        `expected ${expected} to be ACTIVE in scope ${scope}, but it is ${facts.fromDigest ?? 'none'}`,
        {active: facts.fromDigest},
      );
    const target = targetConditions(store, facts);
    const conditions = [
      facts.fromOk,
      facts.target.declared,
      ...target.conditions,
      condition(
        'RATIONALE_GIVEN',
        rationale !== '',
        rationale !== '' ? 'a rationale is given' : 'the rationale is blank',
      ),
    ];
    const refused = conditions.some((c) => !c.passed);
    const executedAt = isoTimestamp(at);
    const base = {
      scope,
      scenario: store.scenario,
      from_digest: facts.fromDigest,
      to_digest: facts.target.digest,
      executed_at: executedAt,
    };
    const record: RollbackExecution = {
      schema_version: 2,
      execution_key: executionKey(base),
      scenario: store.scenario,
      scope,
      status: refused ? 'REFUSED' : emergency ? 'AWAITING_APPROVAL' : 'EXECUTED',
      emergency,
      requested_target: options.to ?? null,
      from_version: facts.fromVersion,
      from_digest: facts.fromDigest,
      from_activated_at: scope === GLOBAL_SCOPE ? active.activated_at : null,
      to_version: facts.target.version,
      to_digest: facts.target.digest,
      evaluator_epoch: target.epoch,
      registry_before: scope === GLOBAL_SCOPE ? null : settled.state.digest,
      rationale,
      actor,
      executed_at: executedAt,
      conditions,
    };
    if (readExecution(store, record.execution_key) !== null)
      fail(
        'CAS_LOST',
        `another rollback was recorded as ${record.execution_key} in the same microsecond; run it again`,
      );
    // A pointer move its history would not vouch for is refused before its record is written.
    if (!refused && scope === GLOBAL_SCOPE)
      prepareMove(store, active, executionMove(record), executionPointer(record), at);
    createExecution(store, record);
    if (!refused) carryOut(store, record, settled, scope === GLOBAL_SCOPE ? activeDigest(store) : null, at);
    return resultOf(record, false);
  });
}

export {ROLLBACK_CONDITIONS};
