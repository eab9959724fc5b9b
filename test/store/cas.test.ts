import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {init} from '../../src/core/common/init.js';
import {KnowledgeStore} from '../../src/store/index.js';
import {compareAndSwap, documentDigest} from '../../src/store/files/cas.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';
import {activeDigest, requireActive, swapActive} from '../../src/store/kinds/promotion/active-pointer.js';

async function scenario() {
  const dir = tempDir();
  const knowledge = path.join(dir, 'knowledge');
  await init({
    knowledge,
    scenario: 'demo',
    from: writeSource(path.join(dir, 'base'), {'playbook/playbook.md': 'baseline'}),
  });
  return {knowledge, store: KnowledgeStore.open(knowledge).scenario('demo')};
}

describe('compare-and-swap of a mutable document', () => {
  it(
    'replaces the document only while it has the expected digest; ' +
      'a moved one is CAS_LOST (exit 6) and nothing is written',
    async () => {
      const {knowledge, store} = await scenario();
      const file = store.paths.active;
      const active = requireActive(store);
      await store.withLock(5, () => {
        const expected = documentDigest(store.writer, file);
        compareAndSwap(store.writer, file, 'active', expected, {...active, rationale: 'first swap'});
        const before = treeHash(knowledge);
        expect(() => compareAndSwap(store.writer, file, 'active', expected, {...active, rationale: 'lost'})).toThrow(
          expect.objectContaining({code: 'CAS_LOST', exitCode: 6}),
        );
        expect(() => compareAndSwap(store.writer, file, 'active', null, {...active, rationale: 'lost'})).toThrow(
          expect.objectContaining({code: 'CAS_LOST', exitCode: 6}),
        );
        expect(treeHash(knowledge)).toBe(before);
        compareAndSwap(store.writer, file, 'active', documentDigest(store.writer, file), {
          ...active,
          rationale: 'second swap',
        });
      });
      expect(requireActive(store).rationale).toBe('second swap');
    },
  );

  it(
    'the pointer move names the pointer (ACTIVE_MOVED, exit 6), refuses without ' +
      'the lock, and a stored file that is not JSON is CORRUPT_FILE naming it',
    async () => {
      const {store} = await scenario();
      const active = requireActive(store);
      expect(() => swapActive(store, activeDigest(store), active)).toThrow(/without its lock/);
      await store.withLock(5, () => {
        expect(() => swapActive(store, '0'.repeat(64), active)).toThrow(
          expect.objectContaining({code: 'ACTIVE_MOVED', exitCode: 6}),
        );
      });
      fs.writeFileSync(store.paths.active, '{"schema_version": 1,');
      await store.withLock(5, () => {
        expect(() => activeDigest(store)).toThrow(
          expect.objectContaining({
            code: 'CORRUPT_FILE',
            exitCode: 8,
            data: expect.objectContaining({file: 'demo/context_bundles/active.json'}),
          }),
        );
      });
    },
  );
});
