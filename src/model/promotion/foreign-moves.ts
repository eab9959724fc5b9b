import type {ActivePointer} from './records.js';
import type {PointerMove} from './pointer-move.js';

export const ROLLOVER_FORM = /^evaluator epoch rollover from (.+)$/s;

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
