import {jsonEqual} from '../../canonical/index.js';
import type {ActivePointer} from './records.js';
import {hasServed} from './served.js';
import {GLOBAL_SCOPE} from '../release/release.js';
import type {PointerMove} from './pointer-move.js';
import {FOREIGN_HEAD, foreignMove, RECORD_PROOF, ROLLOVER_FORM} from './foreign-moves.js';

export {
  executionMove,
  initMove,
  promotionMove,
  rollbackMove,
  rollbackPointer,
  rolloverMove,
  rolloverPointer,
  type MoveKind,
  type PointerMove,
} from './pointer-move.js';
export {
  FOREIGN_HEAD,
  foreignMove,
  RECORD_PROOF,
  recordProvenRollbacks,
  type BaselineRecord,
  type RolledBackRecord,
} from './foreign-moves.js';

export type HistoryCode = 'POINTER_NOT_RECORDED' | 'HISTORY_GAP' | 'ROLLBACK_NOT_SERVED' | 'MISSING_ROLLBACK_RECORD';

export interface HistoryProblem {
  code: HistoryCode;
  /** The move the problem is about (null: active.json itself). */
  move: PointerMove | null;
  message: string;
}

export interface PointerHistory {
  /** The moves that served, oldest first, ending with the one active.json is (empty when it is none). */
  chain: PointerMove[];
  problems: HistoryProblem[];
  /** Recorded moves that never served: a crash after the record, then another move. */
  unserved: PointerMove[];
  /** Recorded moves newer than the pointer that moved away from it: an interrupted move its command completes. */
  pending: PointerMove[];
}

/**
 * An init's pointer: its baseline, no promotion, no rollback target, and the time its record was created (both
 * implementations write them at once).
 */
function isInitPointer(move: PointerMove, active: ActivePointer): boolean {
  return (
    move.kind === 'init' &&
    move.to === active.bundle_digest &&
    move.to_epoch === active.evaluator_epoch &&
    move.at === active.activated_at &&
    active.promotion_id === null &&
    active.rollback_target_digest === null &&
    active.manifest_diff_digest === undefined &&
    !ROLLOVER_FORM.test(active.rationale)
  );
}

/**
 * The rationales a pointer move writes into the two records it changes, as
 * the Python implementation writes them: a promotion gives the promoted
 * record the promotion's rationale and the incumbent "superseded by <d>"; a
 * rollback "restored by rollback: <r>" and "rolled back: <r>"; an epoch
 * rollover "evaluator epoch rollover from <old>" and "evaluator epoch rolled
 * over to <new>". Taken from the pointer alone, so that a move completed
 * later (a re-run, or repair) writes the same words. `active` is undefined
 * for a first pointer, whose record is written with its own.
 */
export function moveRationales(pointer: ActivePointer): {active: string | undefined; superseded: string} {
  if (pointer.promotion_id !== null)
    return {active: pointer.rationale, superseded: `superseded by ${pointer.bundle_digest}`};
  if (pointer.rationale.startsWith('rollback: ') && pointer.rollback_target_digest !== null) {
    const why = pointer.rationale.slice('rollback: '.length);
    return {active: `restored by rollback: ${why}`, superseded: `rolled back: ${why}`};
  }
  if (ROLLOVER_FORM.test(pointer.rationale))
    return {active: pointer.rationale, superseded: `evaluator epoch rolled over to ${pointer.evaluator_epoch}`};
  return {active: undefined, superseded: `superseded by ${pointer.bundle_digest}`};
}

/** The move that made the bundle `move` moved away from active: the newest one that fits, before it. */
function predecessor(move: PointerMove, moves: readonly PointerMove[]): PointerMove | undefined {
  const before = moves.filter((m) => m !== move && m.at <= move.at);
  let fits: PointerMove[];
  if (move.from === null)
    fits = move.from_epoch !== undefined ? before.filter((m) => m.to_epoch === move.from_epoch) : [];
  else if (move.from_activated_at !== null)
    fits = before.filter(
      (m) => m.to === move.from && (m.pointer === null || m.pointer.activated_at === move.from_activated_at),
    );
  else fits = before.filter((m) => m.to === move.from);
  return fits.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))[0];
}

function describe(move: PointerMove): string {
  if (move.foreign && move.id.startsWith(RECORD_PROOF))
    return `the ${move.kind} by another implementation that the record of ${move.id.slice(RECORD_PROOF.length)} shows`;
  if (move.foreign)
    return move.id === FOREIGN_HEAD
      ? `active.json (a ${move.kind} by another implementation)`
      : `the ${move.kind} by another implementation kept as foreign_moves/${move.id}.json`;
  return move.kind === 'init' ? `the init of ${move.to}` : `${move.kind} ${move.id}`;
}

/**
 * Resolve the pointer's history from the recorded moves: the move active.json
 * is, then back through the move each one moved away from to init. A
 * rollback must return to the bundle that served before the one it moved away
 * from. `parentless` says whether a bundle is a baseline.
 */
export function resolvePointerHistory(
  active: ActivePointer,
  moves: readonly PointerMove[],
  parentless: (digest: string) => boolean,
): PointerHistory {
  const problems: HistoryProblem[] = [];
  // A baseline the Python implementation rolled over to looks like an init by its record; active.json's rollover form
  // says which it is.
  let head = moves.find((m) => (m.pointer !== null ? jsonEqual(m.pointer, active) : isInitPointer(m, active)));
  const all = [...moves];
  // A recorded move to this bundle whose pointer differs from active.json in a field or two: one of the two files was
  // edited.
  const near = head
    ? undefined
    : moves.find(
        (m) =>
          m.pointer !== null &&
          m.to === active.bundle_digest &&
          (m.pointer.activated_at === active.activated_at ||
            (m.pointer.rollback_target_digest === active.rollback_target_digest &&
              m.pointer.rationale === active.rationale)),
      );
  if (near) {
    const differing = (Object.keys({...near.pointer, ...active}) as Array<keyof ActivePointer>).filter(
      (k) => !jsonEqual(near.pointer![k] ?? null, active[k] ?? null),
    );
    problems.push({
      code: 'POINTER_NOT_RECORDED',
      move: near,
      message:
        `active.json (serving ${active.bundle_digest}) differs from the pointer ${describe(near)} wrote, in ` +
        `${differing.join(', ')}: one of the two was edited`,
    });
    return {chain: [], problems, unserved: [], pending: []};
  }
  if (!head) {
    const foreign = foreignMove(active, parentless);
    if (foreign) all.push((head = foreign));
  }
  if (!head) {
    problems.push({
      code: 'POINTER_NOT_RECORDED',
      move: null,
      message:
        `active.json (serving ${active.bundle_digest}) is not the pointer any recorded move (init, ` +
        `promotion, rollback or epoch rollover) wrote: it was moved by hand`,
    });
    return {chain: [], problems, unserved: [], pending: []};
  }
  const chain: PointerMove[] = [head];
  const seen = new Set<PointerMove>([head]);
  const rollbacks: PointerMove[] = [];
  for (let cur = head; cur.kind !== 'init'; ) {
    const pred = predecessor(cur, all);
    if (!pred || seen.has(pred)) {
      const from = cur.from ?? `a bundle of epoch "${cur.from_epoch ?? '?'}"`;
      problems.push({
        code: 'HISTORY_GAP',
        move: cur,
        message:
          `${describe(cur)} moved away from ${from}, but no earlier recorded move made it active: a pointer ` +
          `move is missing from the record`,
      });
      break;
    }
    if (cur.kind === 'rollback') rollbacks.push(cur);
    chain.unshift(pred);
    seen.add(pred);
    cur = pred;
  }
  // A rollback restores a bundle that served before the one it moved away from (the recorded target, or one declared
  // with --to).
  for (const rb of rollbacks) {
    const at = chain.indexOf(rb);
    if (
      !hasServed(
        GLOBAL_SCOPE,
        {version: null, bundle_digest: rb.to},
        {chain: chain.slice(0, Math.max(0, at - 1)), receipts: []},
      )
    ) {
      const pred = chain[at - 1];
      problems.push({
        code: 'ROLLBACK_NOT_SERVED',
        move: rb,
        message:
          `${describe(rb)} restored ${rb.to}, which had not served before ` +
          `${rb.from ?? '?'}${pred && pred.kind === 'init' ? ' (it was the first)' : ''}`,
      });
    }
  }
  if (head.foreign && problems.length > 0) {
    // Another implementation's move is accepted only where its own files prove it; here they do not.
    const why = problems.map((p) => p.message).join('; ');
    return {
      chain: [],
      problems: [
        {
          code: 'POINTER_NOT_RECORDED',
          move: null,
          message:
            `active.json (serving ${active.bundle_digest}) is not the pointer any recorded move wrote, nor a ` +
            `${head.kind} of another implementation that the tree proves (${why}): it was moved by hand`,
        },
      ],
      unserved: [],
      pending: [],
    };
  }
  const served = new Set(chain);
  const unserved: PointerMove[] = [];
  const pending: PointerMove[] = [];
  for (const m of moves) {
    // Another implementation's moves are proofs, not records: one the history does not run through is no finding of its
    // own.
    if (served.has(m) || m.kind === 'init' || m.foreign) continue;
    if (m.from === head.to && m.at >= head.at) pending.push(m);
    else unserved.push(m);
  }
  return {chain, problems, unserved, pending};
}
