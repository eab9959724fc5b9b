import {fail} from '../../errors.js';
import type {ContextBundle} from '../../model/bundle/bundle.js';
import {canTransition, type Lifecycle} from '../../model/promotion/lifecycle.js';
import {moveRationales} from '../../model/promotion/pointer-history.js';
import {isoTimestamp, type ActivePointer} from '../../model/promotion/records.js';
import type {ScenarioStore} from '../../store/index.js';
import {readActive, swapActive} from '../../store/kinds/promotion/active-pointer.js';
import {keepForeignHead, plannedMoveProblem, pointerProblem} from '../../store/kinds/promotion/pointer-moves.js';
import type {PointerMove} from '../../model/promotion/pointer-history.js';
import {listCandidateDigests, readRecord, writeRecord} from '../../store/kinds/promotion/candidate-record.js';
import {writeMirrors} from '../../store/kinds/promotion/mirrors.js';
import {scenarioDivergences} from '../../store/kinds/promotion/divergence.js';
import {DIVERGED_WAY_OUT} from '../../model/common/divergence-advice.js';

/**
 * After the pointer moved, bring lifecycles in line with it: the active
 * bundle's record is `active`, any other `active` record becomes `superseded`,
 * each with the rationale the move gives it (moveRationales).
 * Idempotent, so a re-run after a crash between the pointer and the records
 * completes the move. Must run under the scenario lock.
 */
export function finishPointerMove(store: ScenarioStore, pointer: ActivePointer, at: Date): string[] {
  const changed: string[] = [];
  const words = moveRationales(pointer);
  for (const digest of listCandidateDigests(store)) {
    const record = readRecord(store, digest);
    if (!record) continue;
    let next: Lifecycle | undefined;
    if (digest === pointer.bundle_digest && record.lifecycle !== 'active') next = 'active';
    if (digest !== pointer.bundle_digest && record.lifecycle === 'active') next = 'superseded';
    if (!next || !canTransition(record.lifecycle, next)) continue;
    const rationale = next === 'superseded' ? words.superseded : words.active;
    writeRecord(
      store,
      {...record, lifecycle: next, updated_at: isoTimestamp(at), ...(rationale !== undefined ? {rationale} : {})},
      'pointer-move',
    );
    changed.push(digest);
  }
  return changed;
}

/**
 * The pointer move, the one way active.json changes (init, promotion,
 * rollback, epoch rollover): under the scenario lock, every file the new
 * pointer names already durable, compare-and-swap active.json against the
 * digest the caller decided on (`expected`; null for the first pointer), then
 * the mirrors, then the lifecycles. A pointer that moved in between is
 * ACTIVE_MOVED (exit 6) and nothing is written; a crash after the swap leaves
 * mirrors and lifecycles that the next move or `repair` completes.
 */
export function movePointer(
  store: ScenarioStore,
  move: {expected: string | null; pointer: ActivePointer; bundle: ContextBundle; at: Date},
): void {
  // Another implementation's move, which active.json alone proves, is kept before active.json stops showing it.
  const current = move.expected === null ? null : readActive(store);
  if (current) keepForeignHead(store, current, isoTimestamp(move.at));
  // The move's own record is durable by now: a pointer its recorded history does not vouch for is never written.
  const problem = pointerProblem(store, move.pointer);
  if (problem)
    throw new Error(`internal: the pointer about to be written is not what its recorded history wrote: ${problem}`);
  swapActive(store, move.expected, move.pointer);
  writeMirrors(store, move.bundle);
  finishPointerMove(store, move.pointer, move.at);
}

/**
 * Before a move away from the current pointer: it must be what the recorded
 * history wrote (a pointer edited by hand, or a rollback target edited, is
 * refused, never moved on from). Under the scenario lock.
 */
export function requireRecordedPointer(store: ScenarioStore, active: ActivePointer): void {
  const problem = pointerProblem(store, active);
  if (problem)
    fail('INTEGRITY', `${problem}; nothing was changed (run autoctx verify)`, {
      file: store.guard.relative(store.paths.active),
    });
  requireUndiverged(store);
}

/**
 * Before a move, or before bringing lifecycles in line with the pointer: the scenario must not hold a state that only
 * a merge of two clones' histories writes (verify's DIVERGED). Completing one side's lifecycles over the other's would
 * make the divergence permanent (DIVERGED_WAY_OUT says the way out). Under the scenario lock, before any write.
 */
export function requireUndiverged(store: ScenarioStore): void {
  const found = scenarioDivergences(store)[0];
  if (!found) return;
  const [a, b] = found.files.map((f) => store.guard.relative(f));
  fail('DIVERGED', `${a} and ${b} contradict each other; nothing was changed: ${DIVERGED_WAY_OUT}`, {
    file: a,
    files: [a, b],
  });
}

/**
 * Before a move's record is written: the move from `current` to `next` must
 * leave a pointer its recorded history vouches for (the move's record
 * included), else INTEGRITY (exit 8) and nothing is written; then a current
 * pointer that is another implementation's move is kept (foreign_moves/), so
 * the record never names a move the history cannot show. Under the scenario lock.
 */
export function prepareMove(
  store: ScenarioStore,
  current: ActivePointer | null,
  planned: PointerMove,
  next: ActivePointer,
  at: Date,
): void {
  const problem = plannedMoveProblem(store, current, planned, next);
  if (problem)
    fail(
      'INTEGRITY',
      `the ${planned.kind} would leave a pointer its recorded history does not vouch for: ${problem}; ` +
        `nothing was changed (run autoctx verify)`,
      {file: store.guard.relative(store.paths.active)},
    );
  if (current) keepForeignHead(store, current, isoTimestamp(at));
}
