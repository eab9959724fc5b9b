import {fail} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {rejectWithNegativeResult} from './rejection.js';
import {resolveDigest} from '../common/resolve.js';
import {prepareSigning, signingInputs, type SigningOptions} from '../signing/signing.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';

export interface RejectResult {
  status: 'rejected';
  scenario: string;
  bundle_digest: string;
  already_rejected: boolean;
}

/** Abandon a candidate that is not serving: terminal, recorded, with a negative result. */
export async function reject(options: StoreOptions & SigningOptions & {candidate: string; rationale: string}): Promise<RejectResult> {
  if (typeof options.rationale !== 'string' || options.rationale.trim() === '') fail('USAGE', 'reject needs a non-blank --rationale');
  const inputs = signingInputs(options);
  const store = openScenario(options);
  // In a signed tree a rejection is a signed state change.
  prepareSigning(store, options, {actor: null, role: 'sign'}, inputs);
  const digest = resolveDigest(store, options.candidate);
  const bundle = requireBundle(store, digest);
  return store.withLock(lockTimeout(options), () => {
    const record = readRecord(store, digest);
    if (!record) fail('INVALID_TRANSITION', `bundle ${digest} is not a candidate`);
    if (record.lifecycle === 'rejected') return {status: 'rejected' as const, scenario: store.scenario, bundle_digest: digest, already_rejected: true};
    if (record.lifecycle === 'active' || record.lifecycle === 'superseded') fail('INVALID_TRANSITION', `bundle ${digest} is ${record.lifecycle}; use rollback to stop serving it`);
    const at = isoTimestamp(now(options));
    rejectWithNegativeResult(store, bundle, record, {kind: 'rejected', reason: `rejected by hand: ${options.rationale}`, at}, 'reject');
    return {status: 'rejected' as const, scenario: store.scenario, bundle_digest: digest, already_rejected: false};
  });
}
