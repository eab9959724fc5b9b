import {fail} from '../../errors.js';
import {createBundle} from '../../model/bundle/bundle.js';
import {
  isoTimestamp,
  rolloverId,
  rolloverRationale,
  type CandidateRecord,
  type RolloverRecord,
} from '../../model/promotion/records.js';
import {rolloverMove, rolloverPointer} from '../../model/promotion/pointer-history.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {
  finishPointerMove,
  movePointer,
  prepareMove,
  requireRecordedPointer,
  requireUndiverged,
} from '../promotion/pointer-move.js';
import {prepareSigning, signingInputs, type SigningOptions} from '../signing/signing.js';
import {activeDigest, requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {requireBundle, writeBundle} from '../../store/kinds/bundle/bundle.js';
import {readRollover, writeRollover} from '../../store/kinds/promotion/history.js';
import {readRecord, writeRecord} from '../../store/kinds/promotion/candidate-record.js';

export interface RolloverOptions extends StoreOptions, SigningOptions {
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
  const inputs = signingInputs(options);
  const store = openScenario(options);
  // In a signed tree the rollover's record is signed, and its step chained, like any pointer move.
  prepareSigning(store, options, {actor: null, role: 'sign'}, inputs);
  return store.withLock(lockTimeout(options), () => {
    const active = requireActive(store);
    const expected = activeDigest(store);
    if (active.evaluator_epoch === epoch) {
      requireUndiverged(store);
      finishPointerMove(store, active, now(options));
      return {
        status: 'unchanged',
        scenario: store.scenario,
        bundle_digest: active.bundle_digest,
        previous_digest: active.bundle_digest,
        evaluator_epoch: epoch,
      };
    }
    requireRecordedPointer(store, active);
    const current = requireBundle(store, active.bundle_digest);
    const bundle = createBundle({
      scenario: current.scenario,
      evaluator_epoch: epoch,
      parent_digest: null,
      components: current.components,
    });
    const id = rolloverId(current.digest, active.activated_at, epoch);
    // The rollover's record first (an interrupted one is found again by its id), then the baseline, its record, the
    // pointer.
    const rollover: RolloverRecord = readRollover(store, id) ?? {
      schema_version: 1,
      rollover_id: id,
      scenario: store.scenario,
      from_digest: current.digest,
      from_activated_at: active.activated_at,
      from_evaluator_epoch: active.evaluator_epoch,
      to_digest: bundle.digest,
      evaluator_epoch: epoch,
      rolled_over_at: isoTimestamp(now(options)),
    };
    const at = rollover.rolled_over_at;
    const rationale = rolloverRationale(active.evaluator_epoch);
    prepareMove(store, active, rolloverMove(rollover), rolloverPointer(rollover), now(options));
    writeRollover(store, rollover);
    writeBundle(store, bundle);
    const record: CandidateRecord = readRecord(store, bundle.digest) ?? {
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
    writeRecord(store, record, 'rollover');
    movePointer(store, {expected, pointer: rolloverPointer(rollover), bundle, at: now(options)});
    return {
      status: 'rolled_over',
      scenario: store.scenario,
      bundle_digest: bundle.digest,
      previous_digest: current.digest,
      evaluator_epoch: epoch,
    };
  });
}
