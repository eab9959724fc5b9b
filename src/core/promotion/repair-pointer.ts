import type {ScenarioRepair} from '../../store/kinds/common/kind-steps.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';
import {readActive} from '../../store/kinds/promotion/active-pointer.js';
import {writeMirrors} from '../../store/kinds/promotion/mirrors.js';
import {pointerProblem} from '../../store/kinds/promotion/pointer-moves.js';
import {finishPointerMove} from './pointer-move.js';

/**
 * repair: the mirrors and lifecycles behind the pointer are brought in line
 * with it. A pointer its recorded history does not vouch for is never
 * completed: no mirrors, no lifecycles follow it.
 */
export const pointerRepair: ScenarioRepair = {
  order: 500,
  repair({store, rel, now, actions, remaining}) {
    const active = readActive(store);
    const unrecorded = active ? pointerProblem(store, active) : null;
    if (unrecorded) remaining.push(`${rel(store.paths.active)}: ${unrecorded}; left as it is`);
    if (active && !unrecorded) {
      const bundle = readBundle(store, active.bundle_digest);
      if (bundle) writeMirrors(store, bundle);
      for (const d of finishPointerMove(store, active, now()))
        actions.push(`brought the lifecycle of ${d} in line with active.json`);
    }
  },
};
