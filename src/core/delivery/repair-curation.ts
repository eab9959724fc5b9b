import {isAutoctxError} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {isSafeSegment} from '../../store/index.js';
import type {ScenarioRepair} from '../../store/kinds/common/kind-steps.js';
import {curationEntryFile, settleCuration} from '../../store/kinds/delivery/curation.js';
import {listHandoffIds, pendingRevision, revisionFile} from '../../store/kinds/delivery/handoff.js';
import {indexHandoff} from './curation.js';

/** repair: a curation change or a handoff write cut short is completed from what it had written. */
export const curationRepair: ScenarioRepair = {
  order: 300,
  repair({store, rel, now, actions, remaining}) {
    try {
      const settled = settleCuration(store);
      let curation = settled.curation;
      if (settled.completed)
        actions.push(
          `completed ${rel(store.paths.curation)} from ` +
            `${rel(curationEntryFile(store, settled.completed))}, a change cut short after its history entry`,
        );
      for (const id of listHandoffIds(store)) {
        const pending = isSafeSegment(id) ? pendingRevision(store, curation, id) : null;
        if (!pending) continue;
        curation = indexHandoff(store, pending, isoTimestamp(now()));
        actions.push(
          `recorded ${rel(revisionFile(store, pending))} in ${rel(store.paths.curation)}, a handoff write cut short`,
        );
      }
    } catch (error) {
      if (!isAutoctxError(error)) throw error;
      remaining.push(`${rel(store.paths.curation)}: ${error.message}; left as it is`);
    }
  },
};
