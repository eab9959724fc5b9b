import {fail} from '../errors.js';
import {createBundle} from '../model/bundle.js';
import {isoTimestamp, type ActivePointer, type CandidateRecord} from '../model/records.js';
import {lockTimeout, now, openScenario, type StoreOptions} from './context.js';
import {finishPointerMove, movePointer} from './pointer-move.js';

export interface RolloverOptions extends StoreOptions {
  evaluatorEpoch: string;
}

export interface RolloverResult {
  status: 'rolled_over' | 'unchanged';
  scenario: string;
  bundle_digest: string;
  previous_digest: string;
  evaluator_epoch: string;
}

/**
 * Re-anchor the active context under a new evaluator epoch: a new parentless
 * bundle with the same components becomes active; the old one is superseded.
 * To the current epoch it changes nothing.
 */
export async function rolloverEpoch(options: RolloverOptions): Promise<RolloverResult> {
  const epoch = options.evaluatorEpoch;
  if (typeof epoch !== 'string' || epoch.trim() === '') fail('USAGE', '--evaluator-epoch must be a non-blank string');
  const store = openScenario(options);
  return store.withLock(lockTimeout(options), () => {
    const active = store.requireActive();
    const expected = store.activeDigest();
    if (active.evaluator_epoch === epoch) {
      finishPointerMove(store, active, now(options));
      return {status: 'unchanged', scenario: store.scenario, bundle_digest: active.bundle_digest, previous_digest: active.bundle_digest, evaluator_epoch: epoch};
    }
    const current = store.requireBundle(active.bundle_digest);
    const bundle = createBundle({scenario: current.scenario, evaluator_epoch: epoch, parent_digest: null, components: current.components});
    const at = isoTimestamp(now(options));
    const rationale = `evaluator epoch rollover from ${active.evaluator_epoch}`;
    store.writeBundle(bundle);
    const record: CandidateRecord = store.readRecord(bundle.digest) ?? {
      schema_version: 2,
      bundle_digest: bundle.digest,
      parent_digest: null,
      evaluator_epoch: epoch,
      lifecycle: 'active',
      source_run_id: '',
      source_generation: 0,
      created_at: at,
      updated_at: at,
      rationale,
      comparison: null,
      confirmation_policy: null,
      confirmation_policy_digest: null,
    };
    store.writeRecord(record);
    const pointer: ActivePointer = {schema_version: 1, bundle_digest: bundle.digest, evaluator_epoch: epoch, promotion_id: null, rollback_target_digest: current.digest, activated_at: at, rationale};
    movePointer(store, {expected, pointer, bundle, at: now(options)});
    return {status: 'rolled_over', scenario: store.scenario, bundle_digest: bundle.digest, previous_digest: current.digest, evaluator_epoch: epoch};
  });
}
