import type {PointerMove} from '../model/pointer-history.js';
import {openScenario, type StoreOptions} from './context.js';

/** Whether a recorded move served, as the pointer's history tells it. */
export type MoveService = 'serving' | 'served' | 'never' | 'pending' | 'unknown';

export interface LogEntry {
  type: 'promotion' | 'rollback' | 'rollover';
  id: string;
  at: string;
  from_digest: string | null;
  to_digest: string;
  rationale: string;
  served: MoveService;
}

export interface LogResult {
  status: 'ok';
  scenario: string;
  entries: LogEntry[];
}

/** Promotions, rollbacks and epoch rollovers of a scenario, newest first, each with whether it served. */
export function log(options: StoreOptions): LogResult {
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
  entries.sort((x, y) => (x.at < y.at ? 1 : x.at > y.at ? -1 : x.id < y.id ? 1 : -1));
  return {status: 'ok', scenario: store.scenario, entries};
}
