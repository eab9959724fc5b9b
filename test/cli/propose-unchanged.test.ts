import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {runCliProcess} from '../helpers/cli.js';
import {makeTree} from '../helpers/pipeline.js';
import {treeHash, writeSource} from '../helpers/tree.js';

// A proposal whose components are exactly the active bundle's has nothing to evaluate: refused with one line and
// exit 2, the tree unchanged, unless --allow-unchanged asks for it.
describe('proposing the content of the active bundle', () => {
  it('is refused with one line naming the flag, and changes nothing', () => {
    const t = makeTree();
    const same = writeSource(path.join(t.dir, 'same'), {
      'playbook/playbook.md': 'Be helpful.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    const before = treeHash(t.knowledge);
    const r = runCliProcess(['propose', '--from', same, '--rationale', 'try', '--knowledge', t.knowledge]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      new RegExp(
        `^error CANDIDATE_UNCHANGED: .* holds exactly the components of the active bundle ${t.baseline.slice(0, 12)}` +
          '.*--allow-unchanged.*\\n$',
      ),
    );
    expect(treeHash(t.knowledge)).toBe(before);

    const json = runCliProcess(['propose', '--from', same, '--knowledge', t.knowledge, '--json']);
    expect([json.status, json.json.error.code]).toEqual([2, 'CANDIDATE_UNCHANGED']);
    expect(treeHash(t.knowledge)).toBe(before);

    const forced = runCliProcess([
      'propose',
      '--from',
      same,
      '--allow-unchanged',
      '--knowledge',
      t.knowledge,
      '--json',
    ]);
    expect([forced.status, forced.json.status, forced.json.created]).toEqual([0, 'proposed', true]);
    const diff = runCliProcess(['diff', forced.json.bundle_digest, t.baseline, '--knowledge', t.knowledge, '--json']);
    expect(diff.json.manifest_diff.changes).toEqual([]);
  });

  it('is not what a changed proposal meets', () => {
    const t = makeTree();
    const changed = writeSource(path.join(t.dir, 'changed'), {
      'playbook/playbook.md': 'Be brief.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    expect(runCliProcess(['propose', '--from', changed, '--knowledge', t.knowledge]).status).toBe(0);
  });
});
