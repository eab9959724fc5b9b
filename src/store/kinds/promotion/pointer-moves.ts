import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';
import type {ActivePointer} from '../../../model/promotion/records.js';
import type {KindContext} from '../common/kind-context.js';
import type {CandidateRecord} from '../../../model/promotion/records.js';
import {listExecutionKeys, readExecution} from '../rollback/rollback-execution.js';
import {lostExecution} from '../rollback/lost-moves.js';
import {GLOBAL_SCOPE} from '../../../model/release/release.js';
import {
  listPromotionIds,
  listRollbackIds,
  listRolloverIds,
  readPromotion,
  readRollback,
  readRollover,
} from './history.js';
import {
  executionMove,
  FOREIGN_HEAD,
  foreignMove,
  initMove,
  promotionMove,
  RECORD_PROOF,
  recordProvenRollbacks,
  resolvePointerHistory,
  rollbackMove,
  rolloverMove,
  type PointerHistory,
  type PointerMove,
  type RolledBackRecord,
} from '../../../model/promotion/pointer-history.js';
import {foreignMoveId, keepForeignMove, listForeignMoveIds, readForeignMove} from './foreign-move.js';
import {predatesHistories, readAdoption, type AdoptionRead} from './history-adoption.js';
import {historyShape} from './record-history.js';
import {listCandidateDigests, readRecord} from './candidate-record.js';

/**
 * Every recorded pointer move: promotions, rollbacks, rollovers, and the init
 * (the first parentless record that no rollover made). `read` reads one record
 * (verify passes its own, which reports a refusal and returns undefined).
 */
export function pointerMoves(
  ctx: KindContext,
  read: <T>(file: string, fn: () => T) => T | undefined = (_f, fn) => fn(),
  records?: Map<string, CandidateRecord>,
  baselines: Array<[string, CandidateRecord]> = parentlessRecords(ctx, read, records),
  rolledBack: readonly RolledBackRecord[] = [],
): PointerMove[] {
  const moves: PointerMove[] = [];
  for (const id of listPromotionIds(ctx)) {
    const p = read(ctx.paths.promotion(id), () => readPromotion(ctx, id));
    if (p) moves.push(promotionMove(p));
  }
  for (const id of listRollbackIds(ctx)) {
    const r = read(ctx.paths.rollback(id), () => readRollback(ctx, id));
    if (r) moves.push(rollbackMove(r));
  }
  for (const key of listExecutionKeys(ctx)) {
    const r = read(ctx.paths.rollbackExecution(key), () => readExecution(ctx, key));
    if (r && r.scope === GLOBAL_SCOPE && r.status !== 'REFUSED') moves.push(executionMove(r));
  }
  const rolledOver = new Set<string>();
  for (const id of listRolloverIds(ctx)) {
    const r = read(ctx.paths.rollover(id), () => readRollover(ctx, id));
    if (r) {
      moves.push(rolloverMove(r));
      rolledOver.add(r.to_digest);
    }
  }
  // One init per scenario: the first baseline no recorded rollover made. Later baselines another
  // implementation rolled over to are moves only as active.json's own rollover form proves them.
  const inits = baselines.filter(([digest]) => !rolledOver.has(digest));
  const first = inits.sort(([da, a], [db, b]) =>
    a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : da < db ? -1 : 1,
  )[0];
  if (first) moves.push(initMove(first[0], first[1].evaluator_epoch, first[1].created_at));
  // Pointers of another implementation's rollbacks and rollovers, kept when autoctx moved on from them.
  const parentless = new Set(baselines.map(([digest]) => digest));
  for (const id of listForeignMoveIds(ctx)) {
    const m = read(ctx.paths.foreignMove(id), () => {
      const r = readForeignMove(ctx, id);
      if (!r) return null;
      const move = foreignMove(r.pointer, (d) => parentless.has(d), id);
      if (!move)
        fail(
          'INVALID_INPUT',
          `the pointer it keeps is not in the form of another implementation's rollback or rollover`,
        );
      return move;
    });
    if (m) moves.push(m);
  }
  // Rollbacks of another implementation that a later move went on from, proven by the records they left.
  moves.push(
    ...recordProvenRollbacks(
      moves,
      rolledBack,
      baselines.map(([digest, r]) => ({digest, evaluator_epoch: r.evaluator_epoch, created_at: r.created_at})),
    ),
  );
  return moves;
}

/**
 * The records that read as a bundle the Python implementation's rollback (or
 * epoch rollover) left (model/pointer-history.ts recordProvenRollbacks), and
 * that autoctx did not write: autoctx's own moves write the same words, but
 * its record history names each change, so a lost execution record of
 * autoctx's stays an error. A record autoctx did not write is one that
 * predates its histories: as record.json while it has no history yet, and as
 * the first entry of its history (an `adopt` entry, the record as autoctx
 * found it) once autoctx changed it.
 */
function rolledBackRecords(ctx: KindContext, all: Array<[string, CandidateRecord]>): RolledBackRecord[] {
  const words = (r: CandidateRecord) =>
    r.lifecycle === 'superseded' &&
    (r.rationale.startsWith('rolled back: ') || r.rationale.startsWith('evaluator epoch rolled over to '));
  let adoption: AdoptionRead | undefined;
  try {
    adoption = readAdoption(ctx);
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    adoption = undefined;
  }
  const out: RolledBackRecord[] = [];
  for (const [digest, record] of all) {
    // Only a bundle that served can have been rolled back or rolled over from (and it is never anything but active or
    // superseded after).
    if ((record.lifecycle !== 'superseded' && record.lifecycle !== 'active') || !predatesHistories(adoption, digest))
      continue;
    let found: CandidateRecord | null = null;
    try {
      const shape = historyShape(ctx, digest);
      const entry = shape.line[0]?.value;
      if (entry === undefined && shape.detached.length === 0 && shape.forks.length === 0) found = record;
      else if (entry?.cause === 'adopt') found = entry.record;
    } catch (error) {
      rethrowUnless(error, isAutoctxError, isSystemError);
      found = null; // an unreadable history is verify's own finding; it proves nothing here
    }
    if (found && words(found))
      out.push({
        digest,
        rationale: found.rationale,
        updated_at: found.updated_at,
        evaluator_epoch: found.evaluator_epoch,
      });
  }
  return out;
}

/**
 * Why moving the pointer from `current` to `next` by the move `planned` (its
 * record not yet written) would leave a pointer its recorded history does not
 * vouch for (null: it would not). A current pointer that is another
 * implementation's move is counted as kept (keepForeignHead), as the move keeps
 * it. Asked before the move's record is written, so a move that would fail
 * writes nothing.
 */
export function plannedMoveProblem(
  ctx: KindContext,
  current: ActivePointer | null,
  planned: PointerMove,
  next: ActivePointer,
): string | null {
  const all = allRecords(ctx, (_f, fn) => fn());
  const baselines = all.filter(([, r]) => r.parent_digest === null);
  const parentless = new Set(baselines.map(([digest]) => digest));
  const moves = pointerMoves(ctx, undefined, undefined, baselines, rolledBackRecords(ctx, all)).filter(
    (m) => !(m.kind === planned.kind && m.id === planned.id),
  );
  if (current) {
    const head = resolvePointerHistory(current, moves, (d) => parentless.has(d)).chain.at(-1);
    if (head?.foreign && head.id === FOREIGN_HEAD) moves.push({...head, id: foreignMoveId(current)});
  }
  // A baseline the move makes (a rollover's) is a baseline of the history it leaves.
  const isBaseline = (d: string) => parentless.has(d) || (planned.kind === 'rollover' && d === planned.to);
  return resolvePointerHistory(next, [...moves, planned], isBaseline).problems[0]?.message ?? null;
}

/**
 * Before the pointer moves on from `current`: if it is another
 * implementation's rollback or rollover (proven only by its own fields),
 * keep it in foreign_moves/, so that the move stays on the history once
 * active.json no longer shows it. Under the scenario lock.
 */
export function keepForeignHead(ctx: KindContext, current: ActivePointer, at: string): void {
  const head = pointerHistory(ctx, current).chain.at(-1);
  if (head?.foreign && head.id === FOREIGN_HEAD) keepForeignMove(ctx, current, at);
}

function allRecords(
  ctx: KindContext,
  read: <T>(file: string, fn: () => T) => T | undefined,
  records?: Map<string, CandidateRecord>,
): Array<[string, CandidateRecord]> {
  return records
    ? [...records]
    : listCandidateDigests(ctx).flatMap((d) => {
        const r = read(ctx.paths.record(d), () => readRecord(ctx, d));
        return r ? [[d, r] as [string, CandidateRecord]] : [];
      });
}

function parentlessRecords(
  ctx: KindContext,
  read: <T>(file: string, fn: () => T) => T | undefined,
  records?: Map<string, CandidateRecord>,
): Array<[string, CandidateRecord]> {
  return allRecords(ctx, read, records).filter(([, r]) => r.parent_digest === null);
}

/** The pointer's history as the records tell it (model/pointer-history.ts). */
export function pointerHistory(
  ctx: KindContext,
  active: ActivePointer,
  records?: Map<string, CandidateRecord>,
  read?: <T>(file: string, fn: () => T) => T | undefined,
): PointerHistory {
  // The records are read once: for the init among them, and for which bundles are baselines.
  const all = allRecords(ctx, read ?? ((_f, fn) => fn()), records);
  const baselines = all.filter(([, r]) => r.parent_digest === null);
  const moves = pointerMoves(ctx, read, records, baselines, rolledBackRecords(ctx, all));
  const parentless = new Set(baselines.map(([digest]) => digest));
  const h = resolvePointerHistory(active, moves, (d) => parentless.has(d));
  const head = h.chain.at(-1);
  const own =
    head?.foreign && head.kind === 'rollback'
      ? lostExecution(ctx, {to: active.bundle_digest, at: active.activated_at, from: head.from}, active)
      : null;
  if (own) return {chain: [], problems: [own], unserved: [], pending: []};
  // A move missing from the middle of the history that was autoctx's own rollback: its record histories name the
  // execution record lost.
  const lost = h.problems
    .flatMap((p) =>
      (p.code === 'HISTORY_GAP' || p.code === 'ROLLBACK_NOT_SERVED') && p.move?.from && p.move.from_activated_at
        ? [lostExecution(ctx, {to: p.move.from, at: p.move.from_activated_at, from: null}, null)]
        : [],
    )
    .filter((p) => p !== null);
  return lost.length > 0 ? {...h, problems: [...h.problems, ...lost]} : h;
}

/** Why the pointer cannot be moved on from: it is not what its recorded history wrote (null: it is). */
export function pointerProblem(ctx: KindContext, active: ActivePointer): string | null {
  const h = pointerHistory(ctx, active);
  return h.problems[0]?.message ?? null;
}

/** The file that records a move. */
export function moveFile(ctx: KindContext, move: PointerMove): string {
  if (move.foreign && move.id.startsWith(RECORD_PROOF)) return ctx.paths.record(move.id.slice(RECORD_PROOF.length));
  if (move.foreign) return move.id === FOREIGN_HEAD ? ctx.paths.active : ctx.paths.foreignMove(move.id);
  if (move.kind === 'promotion') return ctx.paths.promotion(move.id);
  if (move.kind === 'rollback')
    return move.id.startsWith('RBX-') ? ctx.paths.rollbackExecution(move.id) : ctx.paths.rollback(move.id);
  if (move.kind === 'rollover') return ctx.paths.rollover(move.id);
  return ctx.paths.record(move.to);
}
