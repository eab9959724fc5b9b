import {GLOBAL_SCOPE, versionKey} from '../../model/release/release.js';
import {applyTransition} from '../../model/release/release-gate.js';
import type {ActivePointer} from '../../model/promotion/records.js';
import {executionPointer, type RollbackExecution} from '../../model/rollback/rollback-execution.js';
import type {ScenarioStore} from '../../store/index.js';
import {createReceipt} from '../../store/kinds/release/release-receipt.js';
import {swapRegistry} from '../../store/kinds/release/release-registry.js';
import {listExecutionKeys, readExecution} from '../../store/kinds/rollback/rollback-execution.js';
import {movePointer} from '../promotion/pointer-move.js';
import {nextReceipt} from '../release/registry-view.js';
import {normalized, stateIn, type ScopeView} from '../release/registry-view.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {listRollbackIds, readRollback} from '../../store/kinds/promotion/history.js';

/**
 * Carrying a rollback out, scoped or global, and finding one already recorded: interrupted before its move, or
 * completed.
 */

/**
 * The executed record whose move has not happened yet: a crash after the record, before the pointer or the registry.
 */
export function interrupted(
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
export function completedFrom(
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

export function carryOut(
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
