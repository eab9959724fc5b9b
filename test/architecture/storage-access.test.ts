import {describe, expect, it} from '@jest/globals';
import {ScenarioStore} from '../../src/store/scenario-store.js';

/**
 * One way into storage: every document kind is reached through its own
 * module under src/store/kinds (readRecord(store, digest)), never through
 * methods of ScenarioStore that forward to it. The store keeps what is its
 * own: the root guard and paths, the locks, the run journal, the walk.
 */
describe('ScenarioStore', () => {
  it('has no method that forwards to a document kind', () => {
    const own = Object.getOwnPropertyNames(ScenarioStore.prototype).sort();
    expect(own).toEqual([
      'acquireRunLock',
      'constructor',
      'journalPairs',
      'linkStaysInside',
      'locked',
      'openRunJournal',
      'removeAbandonedLock',
      'sweepLeftovers',
      'updateGitignore',
      'walk',
      'withBareLock',
      'withLock',
    ]);
  });
});
