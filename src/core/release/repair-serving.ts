import {isAutoctxError} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import type {ScenarioRepair} from '../../store/kinds/common/kind-steps.js';
import {listCandidateDigests} from '../../store/kinds/promotion/candidate-record.js';
import {commandActor} from '../common/actor.js';
import {rejectionOf, withdrawRelease} from './serving.js';

/**
 * repair: a rejected bundle never serves; a CANARY or SHADOW of one (as an older autoctx left it) is ended, each by its
 * receipt.
 */
export const rejectedServingRepair: ScenarioRepair = {
  order: 700,
  repair({store, rel, now, actor, actions, remaining}) {
    for (const digest of listCandidateDigests(store)) {
      try {
        if (rejectionOf(store, digest) === null) continue;
        for (const w of withdrawRelease(store, digest, {
          rationale: 'withdrawn by repair: its candidate is rejected',
          at: isoTimestamp(now()),
          actor: commandActor(store, actor),
        })) {
          actions.push(
            `ended the ${w.from} of release ${w.version} in scope ${w.scope} ` +
              `(${rel(w.receipt_file)}): its bundle ${digest} is rejected`,
          );
        }
      } catch (error) {
        if (!isAutoctxError(error)) throw error;
        remaining.push(`the releases of ${digest}: ${error.message}; left as they are`);
      }
    }
  },
};
