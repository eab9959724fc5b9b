import {GLOBAL_SCOPE} from '../../../model/release/release.js';
import type {HistoryProblem, PointerMove} from '../../../model/promotion/pointer-history.js';
import type {ActivePointer} from '../../../model/promotion/records.js';
import type {RecordHistoryEntry} from '../../../model/promotion/record-history.js';
import {executionKey} from '../../../model/rollback/rollback-execution.js';
import {listCandidateDigests} from '../promotion/candidate-record.js';
import type {KindContext} from '../common/kind-context.js';
import {historyEntryFile, readRecordHistory} from '../promotion/record-history.js';
import {exists} from '../../files/fs.js';
import {isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';

/**
 * The execution records of autoctx's own global rollbacks, as the record
 * histories name them. A rollback changes both records in the same step as
 * the pointer, and their histories keep that change: an entry of cause
 * pointer-move at the move's exact time, with the words the move gives
 * ("restored by rollback: <r>" for the bundle it made active, "rolled back:
 * <r>" for the one it left). Those entries determine the execution's key
 * (RBX-<time>-<hash of scope, scenario, bundles, time>), so a lost execution
 * record is named: a pointer in the rollback form another implementation
 * writes, which autoctx's rollback writes too, is then not read as that
 * implementation's, and a gap in the history names the record it lost.
 */

const RESTORED = 'restored by rollback: ';
const LEFT = 'rolled back: ';

function historyOf(ctx: KindContext, digest: string): RecordHistoryEntry[] {
  try {
    return readRecordHistory(ctx, digest);
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    return []; // the history's own checks report it
  }
}

function entryAt(
  ctx: KindContext,
  digest: string,
  at: string,
  words: (rationale: string) => boolean,
): RecordHistoryEntry | undefined {
  return historyOf(ctx, digest).find(
    (e) => e.cause === 'pointer-move' && e.record.updated_at === at && words(e.record.rationale ?? ''),
  );
}

/**
 * The execution record autoctx's rollback to `to` at `at` wrote, when the
 * histories show that rollback and the record is gone (null otherwise).
 * `from`: the bundle it left, when known; `pointer`: the pointer it wrote,
 * when it is active.json.
 */
export function lostExecution(
  ctx: KindContext,
  move: {to: string; at: string; from: string | null},
  pointer: ActivePointer | null,
): HistoryProblem | null {
  const restored = entryAt(ctx, move.to, move.at, (r) => r.startsWith(RESTORED));
  const why = restored
    ? restored.record.rationale!.slice(RESTORED.length)
    : pointer?.rationale.startsWith('rollback: ')
      ? pointer.rationale.slice('rollback: '.length)
      : null;
  if (why === null) return null;
  const left = (d: string) => entryAt(ctx, d, move.at, (r) => r === `${LEFT}${why}`);
  let from = move.from;
  let entry = restored;
  if (from !== null) entry = left(from) ?? restored;
  else {
    for (const d of listCandidateDigests(ctx)) {
      const e = d === move.to ? undefined : left(d);
      if (e) [from, entry] = [d, entry ?? e];
      if (e) break;
    }
  }
  if (!entry || from === null) return null;
  const key = executionKey({
    scope: GLOBAL_SCOPE,
    scenario: ctx.scenario,
    from_digest: from,
    to_digest: move.to,
    executed_at: move.at,
  });
  if (exists(ctx.paths.rollbackExecution(key))) return null; // there: the history's other checks judge it
  const rel = (f: string) => ctx.guard.relative(f);
  const lost: PointerMove = {
    kind: 'rollback',
    id: key,
    to: move.to,
    to_epoch: pointer?.evaluator_epoch ?? '',
    from,
    from_activated_at: null,
    at: move.at,
    pointer,
  };
  const where = pointer ? 'which active.json serves' : 'which a later move moved away from';
  return {
    code: 'MISSING_ROLLBACK_RECORD',
    move: lost,
    message:
      `${rel(ctx.paths.rollbackExecution(key))} is missing: ${rel(historyEntryFile(ctx, entry))} ` +
      `records the rollback autoctx made from ${from} to ${move.to} at ${move.at}, ${where}, but ` +
      `its execution record is gone${pointer ? " (not another implementation's rollback)" : ''}`,
  };
}
