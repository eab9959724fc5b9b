import {openScenario, type StoreOptions} from './context.js';

export interface LogEntry {
  type: 'promotion' | 'rollback';
  id: string;
  at: string;
  from_digest: string | null;
  to_digest: string;
  rationale: string;
}

export interface LogResult {
  status: 'ok';
  scenario: string;
  entries: LogEntry[];
}

/** Promotions and rollbacks of a scenario, newest first. */
export function log(options: StoreOptions): LogResult {
  const store = openScenario(options);
  const entries: LogEntry[] = [];
  for (const id of store.listPromotionIds()) {
    const p = store.readPromotion(id);
    if (p) entries.push({type: 'promotion', id, at: p.promoted_at, from_digest: p.incumbent_digest, to_digest: p.candidate_digest, rationale: p.rationale});
  }
  for (const id of store.listRollbackIds()) {
    const r = store.readRollback(id);
    if (r) entries.push({type: 'rollback', id, at: r.rolled_back_at, from_digest: r.from_digest, to_digest: r.to_digest, rationale: r.rationale});
  }
  entries.sort((x, y) => (x.at < y.at ? 1 : x.at > y.at ? -1 : x.id < y.id ? 1 : -1));
  return {status: 'ok', scenario: store.scenario, entries};
}
