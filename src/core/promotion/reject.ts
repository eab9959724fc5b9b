import {fail} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {rejectWithNegativeResult} from './rejection.js';
import {resolveDigest} from '../common/resolve.js';
import {prepareSigning, signingInputs, type SigningOptions} from '../signing/signing.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {checkActor, commandActor} from '../common/actor.js';
import {withdrawRelease} from '../release/serving.js';

export interface RejectResult {
  status: 'rejected';
  scenario: string;
  bundle_digest: string;
  already_rejected: boolean;
}

/** Abandon a candidate that is not serving: terminal, recorded, with a negative result. */
export async function reject(
  options: StoreOptions & SigningOptions & {candidate: string; rationale: string; actor?: string | undefined},
): Promise<RejectResult> {
  if (typeof options.rationale !== 'string' || options.rationale.trim() === '')
    fail('USAGE', 'reject needs a non-blank --rationale');
  const given = options.actor !== undefined ? checkActor(options.actor) : undefined;
  const inputs = signingInputs(options);
  const store = openScenario(options);
  // In a signed tree a rejection is a signed state change, signed as --actor (when given) or as the key's principal.
  prepareSigning(store, options, {actor: given ?? null, role: 'sign'}, inputs);
  const actor = commandActor(store, given);
  const digest = resolveDigest(store, options.candidate);
  const bundle = requireBundle(store, digest);
  return store.withLock(lockTimeout(options), () => {
    const record = readRecord(store, digest);
    if (!record) fail('INVALID_TRANSITION', `bundle ${digest} is not a candidate`);
    const at = isoTimestamp(now(options));
    if (record.lifecycle === 'rejected') {
      // Already rejected: whatever release still serves it (as an older autoctx left it) is ended now, each by its
      // receipt.
      withdrawRelease(store, digest, {
        rationale: `withdrawn: its candidate is rejected (rejected by hand: ${options.rationale})`,
        at,
        actor,
      });
      return {status: 'rejected' as const, scenario: store.scenario, bundle_digest: digest, already_rejected: true};
    }
    if (record.lifecycle === 'active' || record.lifecycle === 'superseded')
      fail('INVALID_TRANSITION', `bundle ${digest} is ${record.lifecycle}; use rollback to stop serving it`);
    rejectWithNegativeResult(
      store,
      bundle,
      record,
      {kind: 'rejected', reason: `rejected by hand: ${options.rationale}`, at, actor},
      'reject',
    );
    return {status: 'rejected' as const, scenario: store.scenario, bundle_digest: digest, already_rejected: false};
  });
}
