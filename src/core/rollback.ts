import {fail} from '../errors.js';
import {isoTimestamp, rollbackId, type ActivePointer, type RollbackRecord} from '../model/records.js';

export {rollbackId};
import type {ScenarioStore} from '../store/index.js';
import {lockTimeout, now, openScenario, type StoreOptions} from './context.js';
import {finishPointerMove, movePointer, requireRecordedPointer} from './pointer-move.js';
import {resolveDigest} from './resolve.js';

export interface RollbackOptions extends StoreOptions {
  rationale: string;
  expectActive?: string | undefined;
}

export interface RollbackResult {
  status: 'rolled_back';
  scenario: string;
  rollback_id: string;
  from_digest: string;
  bundle_digest: string;
  already_done: boolean;
}


function pointerFor(record: RollbackRecord): ActivePointer {
  return {
    schema_version: 1,
    bundle_digest: record.to_digest,
    evaluator_epoch: record.evaluator_epoch,
    promotion_id: null,
    rollback_target_digest: record.from_digest,
    activated_at: record.rolled_back_at,
    rationale: `rollback: ${record.rationale}`,
  };
}

/** The completed rollback that moved the pointer from `from` to the current pointer, if any. */
function completedRollback(store: ScenarioStore, from: string, active: ActivePointer): RollbackRecord | undefined {
  for (const id of store.listRollbackIds()) {
    const r = store.readRollback(id);
    if (r && r.from_digest === from && r.to_digest === active.bundle_digest && r.rolled_back_at === active.activated_at) return r;
  }
  return undefined;
}

/**
 * Compare-and-swap from the active bundle to its recorded rollback target
 * (which also undoes an earlier rollback). The rollback record is written
 * first, then the pointer, then mirrors and lifecycles.
 */
export async function rollback(options: RollbackOptions): Promise<RollbackResult> {
  if (typeof options.rationale !== 'string' || options.rationale.trim() === '') fail('USAGE', 'rollback needs a non-blank --rationale');
  const store = openScenario(options);
  const expected = options.expectActive !== undefined ? resolveDigest(store, options.expectActive) : undefined;
  return store.withLock(lockTimeout(options), () => {
    const active = store.requireActive();
    const pointerDigest = store.activeDigest();
    if (expected !== undefined && active.bundle_digest !== expected) {
      const done = completedRollback(store, expected, active);
      if (done) {
        store.writeMirrors(store.requireBundle(active.bundle_digest));
        finishPointerMove(store, active, now(options));
        return {status: 'rolled_back', scenario: store.scenario, rollback_id: done.rollback_id, from_digest: done.from_digest, bundle_digest: done.to_digest, already_done: true};
      }
      fail('ACTIVE_MOVED', `expected ${expected} to be active, but the active bundle is ${active.bundle_digest}`, {active: active.bundle_digest});
    }
    requireRecordedPointer(store, active);
    const target = active.rollback_target_digest;
    if (target === null) fail('NO_ROLLBACK_TARGET', `the active bundle ${active.bundle_digest} has no recorded rollback target`);
    const targetBundle = store.readBundle(target);
    if (!targetBundle) fail('INTEGRITY', `the rollback target ${target} named by active.json is missing from bundles/`, {digest: target});
    const id = rollbackId(active.bundle_digest, active.activated_at, target);
    const record: RollbackRecord = store.readRollback(id) ?? {
      schema_version: 1,
      rollback_id: id,
      scenario: store.scenario,
      from_digest: active.bundle_digest,
      to_digest: target,
      from_activated_at: active.activated_at,
      evaluator_epoch: targetBundle.evaluator_epoch,
      rationale: options.rationale,
      rolled_back_at: isoTimestamp(now(options)),
    };
    store.writeRollback(record);
    const pointer = pointerFor(record);
    movePointer(store, {expected: pointerDigest, pointer, bundle: targetBundle, at: now(options)});
    return {status: 'rolled_back', scenario: store.scenario, rollback_id: id, from_digest: record.from_digest, bundle_digest: target, already_done: false};
  });
}
