import type {PointerMove} from '../model/pointer-history.js';
import {fail} from '../errors.js';
import type {CandidateRecord} from '../model/records.js';
import {openScenario, type StoreOptions} from './context.js';

/** Whether a recorded move served, as the pointer's history tells it. */
export type MoveService = 'serving' | 'served' | 'never' | 'pending' | 'unknown';

export interface LogEntry {
  type: 'init' | 'proposal' | 'screen' | 'confirmation' | 'rejection' | 'promotion' | 'rollback' | 'rollover';
  /** The move's id; for a candidate's own events, its digest. */
  id: string;
  at: string;
  from_digest: string | null;
  to_digest: string;
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

/** The decision a record's latest change is, when its lifecycle still says it (a promoted candidate's confirmation is its promotion). */
const DECISION_EVENT: Partial<Record<CandidateRecord['lifecycle'], LogEntry['type']>> = {screened: 'screen', confirmed: 'confirmation', rejected: 'rejection'};

/**
 * The history of a scenario, newest first: its init and every proposal, each
 * candidate's latest decision (a screen, a confirmation, a rejection) while
 * its record still says it, and every promotion, rollback and epoch rollover
 * with whether it served. A record keeps the time of its latest change only,
 * so a screen a candidate went past, or the confirmation of a candidate since
 * promoted, has no entry of its own.
 */
export function log(options: LogOptions): LogResult {
  if (options.limit !== undefined && (!Number.isSafeInteger(options.limit) || options.limit < 1)) fail('USAGE', '--limit must be a positive integer');
  const since = options.since === undefined ? null : Date.parse(options.since);
  if (since !== null && (Number.isNaN(since) || !/^\d{4}-\d{2}-\d{2}/.test(options.since!))) fail('USAGE', `--since must be an ISO 8601 date or timestamp (2026-12-01, 2026-12-01T09:30:00Z), not ${JSON.stringify(options.since)}`);
  const store = openScenario(options);
  const active = store.readActive();
  const history = active ? store.pointerHistory(active) : null;
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
  const rolledOver = new Set(store.listRolloverIds().map((id) => store.readRollover(id)?.to_digest));
  for (const digest of store.listCandidateDigests()) {
    const r = store.readRecord(digest);
    if (!r) continue;
    if (r.parent_digest === null) {
      if (!rolledOver.has(digest)) entries.push({type: 'init', id: digest, at: r.created_at, from_digest: null, to_digest: digest, rationale: 'baseline bundle'});
      continue;
    }
    entries.push({type: 'proposal', id: digest, at: r.created_at, from_digest: r.parent_digest, to_digest: digest, rationale: `run ${r.source_run_id || 'manual'}, generation ${r.source_generation}${r.lifecycle === 'proposed' && r.rationale ? `: ${r.rationale}` : ''}`});
    const decided = DECISION_EVENT[r.lifecycle];
    if (decided) entries.push({type: decided, id: digest, at: r.updated_at, from_digest: r.parent_digest, to_digest: digest, rationale: r.rationale});
  }
  for (const id of store.listPromotionIds()) {
    const p = store.readPromotion(id);
    if (p) entries.push({type: 'promotion', id, at: p.promoted_at, from_digest: p.incumbent_digest, to_digest: p.candidate_digest, rationale: p.rationale, served: of('promotion', id)});
  }
  for (const id of store.listRollbackIds()) {
    const r = store.readRollback(id);
    if (r) entries.push({type: 'rollback', id, at: r.rolled_back_at, from_digest: r.from_digest, to_digest: r.to_digest, rationale: r.rationale, served: of('rollback', id)});
  }
  for (const id of store.listRolloverIds()) {
    const r = store.readRollover(id);
    if (r) entries.push({type: 'rollover', id, at: r.rolled_over_at, from_digest: r.from_digest, to_digest: r.to_digest, rationale: `evaluator epoch ${r.from_evaluator_epoch} -> ${r.evaluator_epoch}`, served: of('rollover', id)});
  }
  // Newest first; at one instant, the later step of a candidate's way first.
  const step: Record<LogEntry['type'], number> = {init: 0, proposal: 1, screen: 2, confirmation: 3, rejection: 3, promotion: 4, rollback: 5, rollover: 5};
  entries.sort((x, y) => (x.at < y.at ? 1 : x.at > y.at ? -1 : step[y.type] - step[x.type] || (x.id < y.id ? 1 : -1)));
  const kept = since === null ? entries : entries.filter((e) => Date.parse(e.at) >= since);
  return {status: 'ok', scenario: store.scenario, entries: options.limit !== undefined ? kept.slice(0, options.limit) : kept};
}
