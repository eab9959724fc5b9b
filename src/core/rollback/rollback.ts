import {fail} from '../../errors.js';
import {GLOBAL_SCOPE, assertVersionName, normalizeScope} from '../../model/release/release.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {
  ROLLBACK_CONDITIONS,
  executionKey,
  executionPointer,
  type Condition,
  type RollbackExecution,
  type StoredStatus,
} from '../../model/rollback/rollback-execution.js';
import {requireActive, activeDigest} from '../../store/kinds/promotion/active-pointer.js';
import {readDescriptor} from '../../store/kinds/release/release-descriptor.js';
import {settleRegistry} from '../../store/kinds/release/release-registry.js';
import {createExecution, readExecution} from '../../store/kinds/rollback/rollback-execution.js';
import {resolveActor} from '../common/actor.js';
import {prepareSigning, signingInputs} from '../signing/signing.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {finishPointerMove, prepareMove, requireRecordedPointer, requireUndiverged} from '../promotion/pointer-move.js';
import {executionMove} from '../../model/promotion/pointer-history.js';
import {scopeView} from '../release/registry-view.js';
import {resolveDigest} from '../common/resolve.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {writeMirrors} from '../../store/kinds/promotion/mirrors.js';
import {condition, targetConditions} from './rollback-conditions.js';
import {decideGlobal, decideScoped} from './rollback-target.js';
import {carryOut, completedFrom, interrupted} from './rollback-carry-out.js';

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
          requireUndiverged(store);
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
      requireUndiverged(store);
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
