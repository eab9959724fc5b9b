import {isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';
import {moveRationales, type PointerHistory, type PointerMove} from '../../../model/promotion/pointer-history.js';
import type {ActivePointer, CandidateRecord} from '../../../model/promotion/records.js';
import type {KindContext} from '../common/kind-context.js';
import {readNegativeResult} from './negative-result.js';
import {moveFile, pointerHistory} from './pointer-moves.js';
import {readActive} from './active-pointer.js';
import {listCandidateDigests, readRecord} from './candidate-record.js';
import {DIVERGED_WAY_OUT} from '../../../model/common/divergence-advice.js';
import {receiptForks} from '../release/release-receipt.js';

/**
 * A state of the serving pointer and the records beside it that no prefix of
 * one command's writes leaves, in any clone: only a merge of two clones'
 * histories (git taking one side of one file and the other side of another)
 * writes it. Each names the two files that contradict each other.
 */
export interface Divergence {
  /** The bundle whose record or move is in question. */
  digest: string;
  files: [string, string];
  message: string;
  /** The release scope whose receipts fork, for a fork in a scope's receipts. */
  scope?: string;
}

const WAY_OUT = DIVERGED_WAY_OUT;

/**
 * The divergences of a scenario whose pointer history holds (`h` has no
 * problems; a history with problems is reported as such, not judged here).
 *
 * Why none of these is a crash state (the writes of one command, in order;
 * docs/guarantees.md "Merges"):
 * - a promotion refuses a rejected candidate or one with a negative result
 *   under the scenario lock, and a rejection refuses a bundle that served: a
 *   bundle the pointer's history made active is never rejected;
 * - a record becomes `active` only after the pointer names it (promotion,
 *   rollback), or, for an epoch rollover's new baseline, just before a
 *   pointer move that is then pending: a record at `active` whose only move
 *   to it never served was written by a move that served in another clone;
 * - a record carries a move's words ("restored by rollback: …", "rolled back:
 *   …", "superseded by …", "evaluator epoch rolled over to …") only once that
 *   move's pointer was written: words of a move that never served, and of no
 *   move that did, were written where that move served.
 */
export function pointerDivergences(
  ctx: KindContext,
  active: ActivePointer,
  h: PointerHistory,
  records: ReadonlyMap<string, CandidateRecord>,
): Divergence[] {
  if (h.problems.length > 0) return [];
  const out: Divergence[] = [];
  const rel = (f: string) => ctx.guard.relative(f);
  const served = new Map<string, PointerMove>();
  for (const m of h.chain) served.set(m.to, m);
  const pendingTo = new Set(h.pending.map((m) => m.to));
  const head = h.chain.at(-1);
  const now =
    `active.json serves ${active.bundle_digest}` +
    `${head && head.kind !== 'init' ? ` by ${head.kind} ${head.id}` : ''}`;
  const negative = (digest: string): boolean => {
    try {
      return readNegativeResult(ctx, digest) !== null;
    } catch (error) {
      rethrowUnless(error, isAutoctxError, isSystemError);
      return false; // an unreadable negative result is its own finding
    }
  };
  // A bundle the history made serve that is rejected.
  for (const [digest, move] of served) {
    if (move.kind === 'init' || move.foreign) continue;
    const record = records.get(digest);
    const rejectedRecord = record?.lifecycle === 'rejected';
    if (!rejectedRecord && !negative(digest)) continue;
    const other = rejectedRecord ? ctx.paths.record(digest) : ctx.paths.negativeResult(digest);
    const mf = moveFile(ctx, move);
    out.push({
      digest,
      files: [mf, other],
      message:
        `${rel(mf)} made ${digest} serve, and ${rel(other)} says it was rejected: no ` +
        `clone rejects a bundle that served or promotes a rejected one; ${WAY_OUT}`,
    });
  }
  const unservedWith = (test: (m: PointerMove) => boolean) => h.unserved.find((m) => !m.foreign && test(m));
  for (const [digest, record] of records) {
    const file = ctx.paths.record(digest);
    if (out.some((d) => d.digest === digest)) continue;
    if (record.lifecycle === 'active' && !served.has(digest) && !pendingTo.has(digest)) {
      const m = unservedWith((x) => x.to === digest);
      if (m) {
        const mf = moveFile(ctx, m);
        out.push({
          digest,
          files: [file, mf],
          message:
            `${rel(file)} says "active", but ${rel(mf)}, the ${m.kind} ` +
            `that made it active, never served here (${now}): ${WAY_OUT}`,
        });
      }
      continue;
    }
    const words = (m: PointerMove, which: 'active' | 'superseded') =>
      m.pointer !== null && moveRationales(m.pointer)[which] === record.rationale;
    if (record.lifecycle === 'active' && record.rationale.startsWith('restored by rollback: ')) {
      if (h.chain.some((m) => m.kind === 'rollback' && m.to === digest && words(m, 'active'))) continue;
      const m = unservedWith((x) => x.kind === 'rollback' && x.to === digest && words(x, 'active'));
      if (m) {
        const mf = moveFile(ctx, m);
        out.push({
          digest,
          files: [file, mf],
          message:
            `${rel(file)} says it was restored by ${rel(mf)}, but that rollback never served ` +
            `here (${now}; the bundle it rolled back is no longer rolled back): ${WAY_OUT}`,
        });
      }
      continue;
    }
    if (record.lifecycle === 'superseded') {
      if (h.chain.some((m) => m.kind !== 'init' && words(m, 'superseded'))) continue;
      const m = unservedWith((x) => x.from === digest && words(x, 'superseded'));
      if (m) {
        const mf = moveFile(ctx, m);
        out.push({
          digest,
          files: [file, mf],
          message:
            `${rel(file)} says "${record.rationale}", the words of ${rel(mf)}, ` +
            `but that ${m.kind} never served here (${now}): ${WAY_OUT}`,
        });
      }
    }
  }
  return out;
}

/**
 * The divergences of a scenario as its files stand (for repair, status and the commands that change what serves):
 * the pointer's (none when it serves nothing), then the forks in the release receipts. A file that cannot be read is
 * left out here (verify names it).
 */
export function scenarioDivergences(ctx: KindContext): Divergence[] {
  const releases: Divergence[] = receiptForks(ctx);
  return [...servingDivergences(ctx), ...releases];
}

function servingDivergences(ctx: KindContext): Divergence[] {
  const quiet = <T>(fn: () => T): T | null => {
    try {
      return fn();
    } catch (error) {
      rethrowUnless(error, isAutoctxError, isSystemError);
      return null;
    }
  };
  const active = quiet(() => readActive(ctx));
  if (!active) return [];
  const records = new Map<string, CandidateRecord>();
  for (const digest of quiet(() => listCandidateDigests(ctx)) ?? []) {
    const r = quiet(() => readRecord(ctx, digest));
    if (r) records.set(digest, r);
  }
  const h = quiet(() => pointerHistory(ctx, active, records));
  return h ? pointerDivergences(ctx, active, h, records) : [];
}

/**
 * The bundles a recorded but pending pointer move would change (the one it moves to and the one it moves away from),
 * each with its move's file. A lifecycle change such a move made (a record history entry of cause "pointer-move")
 * while the pointer is not there was not cut short by a crash (a move changes lifecycles only after the pointer):
 * the tree was partly reverted (`git stash` after an uncommitted move keeps its new files). Running the move's
 * command again completes it; completing the lifecycle alone would leave the pointer behind for good.
 */
export function pendingMoveBundles(ctx: KindContext): Map<string, {move: PointerMove; file: string}> {
  const out = new Map<string, {move: PointerMove; file: string}>();
  let active: ActivePointer | null;
  try {
    active = readActive(ctx);
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    return out;
  }
  if (!active) return out;
  let h: PointerHistory;
  try {
    h = pointerHistory(ctx, active);
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    return out;
  }
  if (h.problems.length > 0) return out;
  for (const move of h.pending) {
    const file = moveFile(ctx, move);
    out.set(move.to, {move, file});
    if (move.from !== null) out.set(move.from, {move, file});
  }
  return out;
}
