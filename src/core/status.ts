import {LIFECYCLES, type Lifecycle} from '../model/lifecycle.js';
import {openKnowledge, type StoreOptions} from './context.js';

export interface ScenarioStatus {
  scenario: string;
  active: {bundle_digest: string; evaluator_epoch: string; rollback_target_digest: string | null; promotion_id: string | null} | null;
  candidates: Partial<Record<Lifecycle, string[]>>;
}

export interface StatusResult {
  status: 'ok';
  scenarios: ScenarioStatus[];
}

/** The active pointer and the bundles by lifecycle, for one scenario or all. */
export function status(options: StoreOptions): StatusResult {
  const knowledge = openKnowledge(options);
  const names = options.scenario !== undefined ? [knowledge.resolveScenario(options.scenario)] : knowledge.listScenarios();
  const scenarios = names.map((name): ScenarioStatus => {
    const store = knowledge.scenario(name);
    const a = store.readActive();
    const candidates: Partial<Record<Lifecycle, string[]>> = {};
    for (const digest of store.listCandidateDigests()) {
      const record = store.readRecord(digest);
      if (!record) continue;
      (candidates[record.lifecycle] ??= []).push(digest);
    }
    const ordered: Partial<Record<Lifecycle, string[]>> = {};
    for (const l of LIFECYCLES) if (candidates[l]) ordered[l] = candidates[l];
    return {
      scenario: name,
      active: a ? {bundle_digest: a.bundle_digest, evaluator_epoch: a.evaluator_epoch, rollback_target_digest: a.rollback_target_digest, promotion_id: a.promotion_id} : null,
      candidates: ordered,
    };
  });
  return {status: 'ok', scenarios};
}
