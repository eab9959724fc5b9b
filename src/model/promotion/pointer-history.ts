import {jsonEqual} from '../../canonical/index.js';
import {
  rolloverRationale,
  type ActivePointer,
  type PromotionRecord,
  type RollbackRecord,
  type RolloverRecord,
} from './records.js';
import {executionPointer, type RollbackExecution} from '../rollback/rollback-execution.js';
import {hasServed} from './served.js';
import {GLOBAL_SCOPE} from '../release/release.js';

/**
 * The history of the serving pointer. Every way active.json changes leaves a
 * record that determines the pointer it wrote: init (the baseline's record),
 * a promotion, a rollback, an epoch rollover. The pointer must be the one the
 * newest move on record wrote, and each move must have moved away from what
 * an earlier recorded move made active, back to init.
 */
export type MoveKind = 'init' | 'promotion' | 'rollback' | 'rollover';

export interface PointerMove {
  kind: MoveKind;
  /** The record's id (for init: the baseline's digest). */
  id: string;
  to: string;
  to_epoch: string;
  /** The bundle it moved away from (null for init, and for a rollover the Python implementation wrote). */
  from: string | null;
  /** The activated_at of the pointer it moved away from, where the record keeps it (rollbacks, rollovers). */
  from_activated_at: string | null;
  /** For a rollover the Python implementation wrote: the epoch it moved away from. */
  from_epoch?: string;
  /** When it moved: the activated_at of the pointer it wrote. */
  at: string;
  /** The exact pointer it wrote (null for init, whose time the Python implementation does not keep). */
  pointer: ActivePointer | null;
  /** A move of the Python implementation's, proven only by active.json's own fields. */
  foreign?: true;
}

export function promotionMove(p: PromotionRecord): PointerMove {
  const pointer: ActivePointer = {
    schema_version: 1,
    bundle_digest: p.candidate_digest,
    evaluator_epoch: p.evaluator_epoch,
    promotion_id: p.promotion_id,
    rollback_target_digest: p.rollback_target_digest,
    activated_at: p.promoted_at,
    rationale: p.rationale,
    manifest_diff_digest: p.manifest_diff_digest,
  };
  return {
    kind: 'promotion',
    id: p.promotion_id,
    to: p.candidate_digest,
    to_epoch: p.evaluator_epoch,
    from: p.incumbent_digest,
    from_activated_at: null,
    at: p.promoted_at,
    pointer,
  };
}

export function rollbackPointer(r: RollbackRecord): ActivePointer {
  return {
    schema_version: 1,
    bundle_digest: r.to_digest,
    evaluator_epoch: r.evaluator_epoch,
    promotion_id: null,
    rollback_target_digest: r.from_digest,
    activated_at: r.rolled_back_at,
    rationale: `rollback: ${r.rationale}`,
  };
}

export function rollbackMove(r: RollbackRecord): PointerMove {
  return {
    kind: 'rollback',
    id: r.rollback_id,
    to: r.to_digest,
    to_epoch: r.evaluator_epoch,
    from: r.from_digest,
    from_activated_at: r.from_activated_at,
    at: r.rolled_back_at,
    pointer: rollbackPointer(r),
  };
}

/** An executed rollback of the global scope (the rollback service's record): a pointer move like the older records. */
export function executionMove(r: RollbackExecution): PointerMove {
  return {
    kind: 'rollback',
    id: r.execution_key,
    to: r.to_digest!,
    to_epoch: r.evaluator_epoch!,
    from: r.from_digest,
    from_activated_at: r.from_activated_at,
    at: r.executed_at,
    pointer: executionPointer(r),
  };
}

/**
 * autoctx's rollover keeps the bundle it moved away from as the rollback target (the Python implementation keeps none).
 */
export function rolloverPointer(r: RolloverRecord): ActivePointer {
  return {
    schema_version: 1,
    bundle_digest: r.to_digest,
    evaluator_epoch: r.evaluator_epoch,
    promotion_id: null,
    rollback_target_digest: r.from_digest,
    activated_at: r.rolled_over_at,
    rationale: rolloverRationale(r.from_evaluator_epoch),
  };
}

export function rolloverMove(r: RolloverRecord): PointerMove {
  return {
    kind: 'rollover',
    id: r.rollover_id,
    to: r.to_digest,
    to_epoch: r.evaluator_epoch,
    from: r.from_digest,
    from_activated_at: r.from_activated_at,
    at: r.rolled_over_at,
    pointer: rolloverPointer(r),
  };
}

/** The baseline an init made active, known from its record (created_at orders it). */
export function initMove(digest: string, epoch: string, createdAt: string): PointerMove {
  return {
    kind: 'init',
    id: digest,
    to: digest,
    to_epoch: epoch,
    from: null,
    from_activated_at: null,
    at: createdAt,
    pointer: null,
  };
}

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

const ROLLOVER_FORM = /^evaluator epoch rollover from (.+)$/s;

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

/** The id of a foreign move that is active.json itself (one autoctx kept when it moved on has its file's id). */
export const FOREIGN_HEAD = 'active.json';

/**
 * active.json (or a pointer autoctx kept in foreign_moves/ when it moved on
 * from it, under that file's id) read as a move of the Python implementation, which records no
 * rollbacks or rollovers of its own: only its exact rollback form (rationale
 * "rollback: …", no promotion, a rollback target, no diff digest) or rollover
 * form (its rationale, no promotion, no rollback target, a parentless bundle
 * of a new epoch).
 */
export function foreignMove(
  active: ActivePointer,
  parentless: (digest: string) => boolean,
  id = FOREIGN_HEAD,
): PointerMove | null {
  if (active.promotion_id !== null || active.manifest_diff_digest !== undefined) return null;
  const base = {
    id,
    to: active.bundle_digest,
    to_epoch: active.evaluator_epoch,
    from_activated_at: null,
    at: active.activated_at,
    pointer: active,
    foreign: true as const,
  };
  if (active.rationale.startsWith('rollback: ') && active.rollback_target_digest !== null)
    return {...base, kind: 'rollback', from: active.rollback_target_digest};
  const rollover = ROLLOVER_FORM.exec(active.rationale);
  if (
    rollover &&
    active.rollback_target_digest === null &&
    rollover[1] !== active.evaluator_epoch &&
    parentless(active.bundle_digest)
  )
    return {...base, kind: 'rollover', from: null, from_epoch: rollover[1]!};
  return null;
}

/**
 * A record as the Python implementation's rollback leaves the bundle it rolled back: superseded, "rolled back: <why>".
 */
export interface RolledBackRecord {
  digest: string;
  rationale: string;
  updated_at: string;
  evaluator_epoch: string;
}

/** A baseline's record: the bundle an init or an epoch rollover made active. */
export interface BaselineRecord {
  digest: string;
  evaluator_epoch: string;
  created_at: string;
}

const ROLLED_OVER = /^evaluator epoch rolled over to (.+)$/s;

const ROLLED_BACK = 'rolled back: ';

/**
 * Rollbacks of the Python implementation that a later move went on from, as
 * the records it wrote prove them: it keeps no record of a rollback, but
 * leaves the bundle it rolled back superseded with the rationale "rolled back:
 * <why>", which no other move writes, and the pointer it restored was the
 * rollback target of the pointer that had made that bundle active. Each is a
 * foreign move at the record's updated_at (its pointer itself is gone). A
 * record that a recorded rollback (autoctx's, or one kept in foreign_moves/ or
 * active.json) with the same rationale explains proves nothing more.
 */
export function recordProvenRollbacks(
  moves: readonly PointerMove[],
  records: readonly RolledBackRecord[],
  baselines: readonly BaselineRecord[] = [],
): PointerMove[] {
  const out: PointerMove[] = [];
  for (const r of records) {
    const rolledOver = ROLLED_OVER.exec(r.rationale);
    if (rolledOver) {
      // An epoch rollover leaves the old baseline "evaluator epoch rolled over to <epoch>" and writes the new one's
      // record and pointer at one time.
      const to = baselines
        .filter((b) => b.evaluator_epoch === rolledOver[1] && b.created_at <= r.updated_at && b.digest !== r.digest)
        .sort((a, b) => (a.created_at < b.created_at ? 1 : -1))[0];
      if (!to || moves.some((m) => m.to === to.digest && m.kind === 'rollover')) continue;
      out.push({
        kind: 'rollover',
        id: `${RECORD_PROOF}${r.digest}`,
        to: to.digest,
        to_epoch: to.evaluator_epoch,
        from: null,
        from_epoch: r.evaluator_epoch,
        from_activated_at: null,
        at: to.created_at,
        pointer: null,
        foreign: true,
      });
      continue;
    }
    if (!r.rationale.startsWith(ROLLED_BACK)) continue;
    const why = r.rationale.slice(ROLLED_BACK.length);
    if (moves.some((m) => m.kind === 'rollback' && m.from === r.digest && m.pointer?.rationale === `rollback: ${why}`))
      continue;
    // The pointer that made it active: the newest move to it before the record changed.
    const made = moves
      .filter((m) => m.to === r.digest && m.at <= r.updated_at)
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))[0];
    const to =
      made?.kind === 'promotion' ? made.pointer!.rollback_target_digest : made?.kind === 'rollback' ? made.from : null;
    if (!made || !to) continue;
    out.push({
      kind: 'rollback',
      id: `${RECORD_PROOF}${r.digest}`,
      to,
      to_epoch: made.to_epoch,
      from: r.digest,
      from_activated_at: null,
      at: r.updated_at,
      pointer: null,
      foreign: true,
    });
  }
  return out;
}

/** The id prefix of a foreign rollback proven by the record of the bundle it rolled back. */
export const RECORD_PROOF = 'record:';

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
      message: `active.json (serving ${active.bundle_digest}) differs from the pointer ${describe(near)} wrote, in ${differing.join(', ')}: one of the two was edited`,
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
      message: `active.json (serving ${active.bundle_digest}) is not the pointer any recorded move (init, promotion, rollback or epoch rollover) wrote: it was moved by hand`,
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
        message: `${describe(cur)} moved away from ${from}, but no earlier recorded move made it active: a pointer move is missing from the record`,
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
        message: `${describe(rb)} restored ${rb.to}, which had not served before ${rb.from ?? '?'}${pred && pred.kind === 'init' ? ' (it was the first)' : ''}`,
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
          message: `active.json (serving ${active.bundle_digest}) is not the pointer any recorded move wrote, nor a ${head.kind} of another implementation that the tree proves (${why}): it was moved by hand`,
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
