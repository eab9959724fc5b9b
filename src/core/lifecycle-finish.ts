import {canTransition, type Lifecycle} from '../model/lifecycle.js';
import {isoTimestamp, type ActivePointer} from '../model/records.js';
import type {ScenarioStore} from '../store/index.js';

/**
 * After the pointer moved, bring lifecycles in line with it: the active
 * bundle's record is `active`, any other `active` record becomes `superseded`.
 * Idempotent, so a re-run after a crash between the pointer and the records
 * completes the move. Must run under the scenario lock.
 */
export function finishPointerMove(store: ScenarioStore, pointer: ActivePointer, at: Date, rationaleFor?: (lifecycle: Lifecycle) => string | undefined): string[] {
  const changed: string[] = [];
  for (const digest of store.listCandidateDigests()) {
    const record = store.readRecord(digest);
    if (!record) continue;
    let next: Lifecycle | undefined;
    if (digest === pointer.bundle_digest && record.lifecycle !== 'active') next = 'active';
    if (digest !== pointer.bundle_digest && record.lifecycle === 'active') next = 'superseded';
    if (!next || !canTransition(record.lifecycle, next)) continue;
    const rationale = rationaleFor ? rationaleFor(next) : next === 'superseded' ? `superseded by ${pointer.bundle_digest}` : undefined;
    store.writeRecord({...record, lifecycle: next, updated_at: isoTimestamp(at), ...(rationale !== undefined ? {rationale} : {})});
    changed.push(digest);
  }
  return changed;
}
