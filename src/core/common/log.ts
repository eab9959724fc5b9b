import {GLOBAL_SCOPE} from '../../model/release/release.js';
import {listExecutionKeys, readExecution} from '../../store/kinds/rollback/rollback-execution.js';
import type {PointerMove} from '../../model/promotion/pointer-history.js';
import {fail} from '../../errors.js';
import type {CandidateRecord} from '../../model/promotion/records.js';
import {recordEvent, type RecordHistoryEntry} from '../../model/promotion/record-history.js';
import {openScenario, type StoreOptions} from './store-options.js';
import {readActive} from '../../store/kinds/promotion/active-pointer.js';
import {pointerHistory} from '../../store/kinds/promotion/pointer-moves.js';
import {
  listPromotionIds,
  listRollbackIds,
  listRolloverIds,
  readPromotion,
  readRollback,
  readRollover,
} from '../../store/kinds/promotion/history.js';
import {listCandidateDigests, readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {readRecordHistory} from '../../store/kinds/promotion/record-history.js';
import {listReconciles, readReconcile} from '../../store/kinds/common/reconcile-record.js';
import {describeStep} from '../../model/common/reconcile.js';
import type {ScenarioStore} from '../../store/index.js';

/** Each reconcile after a merge: what became of each change the other side made (the other branch's story). */
function reconcileEntries(store: ScenarioStore): LogEntry[] {
  return listReconciles(store).flatMap((digest) => {
    const r = readReconcile(store, digest);
    if (!r) return [];
    const from = `${r.other.side} ${r.other.commit.slice(0, 12)}`;
    return r.steps.map((s) => ({
      type: 'reconcile' as const,
      id: digest,
      at: r.reconciled_at,
      from_digest: null,
      to_digest: /^[0-9a-f]{64}$/.test(s.subject) ? s.subject : null,
      rationale: `reconcile of ${from} onto ${r.kept.side}: ${describeStep(s)}`,
    }));
  });
}

/** Whether a recorded move served, as the pointer's history tells it. */
export type MoveService = 'serving' | 'served' | 'never' | 'pending' | 'unknown';

export interface LogEntry {
  type:
    | 'init'
    | 'proposal'
    | 'screen'
    | 'confirmation'
    | 'rejection'
    | 'promotion'
    | 'rollback'
    | 'rollover'
    | 'reconcile';
  /** The move's id; for a candidate's own events, its digest. */
  id: string;
  at: string;
  from_digest: string | null;
  /** Null for a reconcile step about no one bundle (a release transition, a curation change). */
  to_digest: string | null;
  rationale: string;
  /** For pointer moves only: whether the move served. */
  served?: MoveService;
}

export interface LogOptions extends StoreOptions {
  /** At most this many entries, the newest. */
  limit?: number | undefined;
  /** Only entries at or after this time (an ISO 8601 date or timestamp). */
  since?: string | undefined;
}

export interface LogResult {
  status: 'ok';
  scenario: string;
  entries: LogEntry[];
}

/**
 * A candidate's changes as (before, after) pairs of its record. With a history
 * from its proposal on, every change; without one (written by an earlier
 * autoctx or the Python implementation, or adopted later), its proposal and
 * the change its first known record stands for, then the history after it.
 */
function changesOf(
  record: CandidateRecord,
  history: readonly RecordHistoryEntry[],
): Array<[CandidateRecord | null, CandidateRecord]> {
  const records = history.map((e) => e.record);
  if (history[0]?.cause === 'propose') return records.map((after, i) => [records[i - 1] ?? null, after]);
  const first = records[0] ?? record;
  const proposed: CandidateRecord = {
    ...first,
    lifecycle: 'proposed',
    comparison: null,
    rationale: first.lifecycle === 'proposed' ? first.rationale : '',
  };
  return [
    [null, proposed],
    [proposed, first],
    ...records.slice(1).map((after, i): [CandidateRecord, CandidateRecord] => [records[i]!, after]),
  ];
}

/**
 * The history of a scenario, newest first: its init, every proposal, every
 * screen, confirmation and rejection its candidates' record histories hold,
 * and every promotion, rollback and epoch rollover with whether it served. A
 * candidate written without a record history shows its latest decision only.
 */
export function log(options: LogOptions): LogResult {
  if (options.limit !== undefined && (!Number.isSafeInteger(options.limit) || options.limit < 1))
    fail('USAGE', '--limit must be a positive integer');
  const since = options.since === undefined ? null : Date.parse(options.since);
  if (since !== null && (Number.isNaN(since) || !/^\d{4}-\d{2}-\d{2}/.test(options.since!)))
    fail(
      'USAGE',
      `--since must be an ISO 8601 date or timestamp (2026-12-01, 2026-12-01T09:30:00Z), not ` +
        `${JSON.stringify(options.since)}`,
    );
  const store = openScenario(options);
  const active = readActive(store);
  const history = active ? pointerHistory(store, active) : null;
  const key = (kind: string, id: string) => `${kind}\u0000${id}`;
  const service = new Map<string, MoveService>();
  if (history && history.problems.length === 0) {
    const mark = (moves: PointerMove[], s: MoveService) => moves.forEach((m) => service.set(key(m.kind, m.id), s));
    mark(history.chain, 'served');
    mark(history.chain.slice(-1), 'serving');
    mark(history.unserved, 'never');
    mark(history.pending, 'pending');
  }
  const of = (kind: string, id: string): MoveService => service.get(key(kind, id)) ?? 'unknown';
  const entries: LogEntry[] = [];
  const rolledOver = new Set(listRolloverIds(store).map((id) => readRollover(store, id)?.to_digest));
  for (const digest of listCandidateDigests(store)) {
    const r = readRecord(store, digest);
    if (!r) continue;
    if (r.parent_digest === null && !rolledOver.has(digest))
      entries.push({
        type: 'init',
        id: digest,
        at: r.created_at,
        from_digest: null,
        to_digest: digest,
        rationale: 'baseline bundle',
      });
    if (r.parent_digest === null) continue;
    const changes = changesOf(r, readRecordHistory(store, digest));
    // The looks of one run are one step: of consecutive changes of one kind, the last stands for them.
    const events = changes
      .map(([before, after]) => ({event: recordEvent(before, after), after}))
      .filter((e, i, all) => e.event !== null && all.slice(i + 1).find((n) => n.event !== null)?.event !== e.event);
    for (const {event, after} of events) {
      if (event === 'proposal')
        entries.push({
          type: 'proposal',
          id: digest,
          at: after.created_at,
          from_digest: after.parent_digest,
          to_digest: digest,
          rationale:
            `run ${after.source_run_id || 'manual'}, generation ` +
            `${after.source_generation}` +
            `${after.rationale && after.lifecycle === 'proposed' ? `: ${after.rationale}` : ''}`,
        });
      else if (event)
        entries.push({
          type: event,
          id: digest,
          at: after.updated_at,
          from_digest: after.parent_digest,
          to_digest: digest,
          rationale: after.rationale,
        });
    }
  }
  for (const id of listPromotionIds(store)) {
    const p = readPromotion(store, id);
    if (p)
      entries.push({
        type: 'promotion',
        id,
        at: p.promoted_at,
        from_digest: p.incumbent_digest,
        to_digest: p.candidate_digest,
        rationale: p.rationale,
        served: of('promotion', id),
      });
  }
  for (const id of listRollbackIds(store)) {
    const r = readRollback(store, id);
    if (r)
      entries.push({
        type: 'rollback',
        id,
        at: r.rolled_back_at,
        from_digest: r.from_digest,
        to_digest: r.to_digest,
        rationale: r.rationale,
        served: of('rollback', id),
      });
  }
  for (const key of listExecutionKeys(store)) {
    const r = readExecution(store, key);
    if (r && r.scope === GLOBAL_SCOPE && r.status !== 'REFUSED')
      entries.push({
        type: 'rollback',
        id: key,
        at: r.executed_at,
        from_digest: r.from_digest!,
        to_digest: r.to_digest!,
        rationale: r.emergency ? `emergency: ${r.rationale}` : r.rationale,
        served: of('rollback', key),
      });
  }
  for (const id of listRolloverIds(store)) {
    const r = readRollover(store, id);
    if (r)
      entries.push({
        type: 'rollover',
        id,
        at: r.rolled_over_at,
        from_digest: r.from_digest,
        to_digest: r.to_digest,
        rationale: `evaluator epoch ${r.from_evaluator_epoch} -> ${r.evaluator_epoch}`,
        served: of('rollover', id),
      });
  }
  entries.push(...reconcileEntries(store));
  // Newest first; at one instant, the later step of a candidate's way first.
  const step: Record<LogEntry['type'], number> = {
    init: 0,
    proposal: 1,
    screen: 2,
    confirmation: 3,
    rejection: 3,
    promotion: 4,
    rollback: 5,
    rollover: 5,
    reconcile: 6,
  };
  entries.sort((x, y) => (x.at < y.at ? 1 : x.at > y.at ? -1 : step[y.type] - step[x.type] || (x.id < y.id ? 1 : -1)));
  const kept = since === null ? entries : entries.filter((e) => Date.parse(e.at) >= since);
  return {
    status: 'ok',
    scenario: store.scenario,
    entries: options.limit !== undefined ? kept.slice(0, options.limit) : kept,
  };
}
