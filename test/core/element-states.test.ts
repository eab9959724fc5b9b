import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {diffBundles, materialize} from '../../src/core/bundle/bundle.js';
import {tagAdd} from '../../src/core/delivery/curation.js';
import {init} from '../../src/core/common/init.js';
import {propose} from '../../src/core/promotion/propose.js';
import {verify} from '../../src/core/common/verify.js';
import {recall, render} from '../../src/public/bootstrap.js';
import {nonPresentDigest} from '../../src/model/bundle/element-state.js';
import {isAutoctxError} from '../../src/errors.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

const states = (elements: unknown[]) => JSON.stringify({schema_version: 1, elements});

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    if (isAutoctxError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

async function tree() {
  const dir = tempDir('autoctx-states-');
  const knowledge = path.join(dir, 'knowledge');
  await init({
    knowledge,
    scenario: 'demo',
    from: writeSource(path.join(dir, 'base'), {
      'playbook/playbook.md': 'Check the sync icon first.\n',
      'hints/hints.md': 'Quota warnings come from the account page.\n',
    }),
  });
  // The candidate lacks the hints on purpose, and the host supplies a dictionary.
  const src = writeSource(path.join(dir, 'cand'), {
    'playbook/playbook.md': 'Check the sync icon first.\n',
    'element_states.json': states([
      {kind: 'hints', key: 'hints', state: 'ABSENT', media_type: 'text/markdown'},
      {kind: 'prompt_fragment', key: 'dictionary', state: 'INCLUDED'},
    ]),
  });
  const proposed = await propose({knowledge, scenario: 'demo', from: src});
  return {dir, knowledge, src, proposed};
}

describe('element states in source folders, materialize and diff', () => {
  it(
    'proposes a folder with element_states.json, and materializes ' +
      'it back to a folder that proposes to the same digest',
    async () => {
      const {dir, knowledge, proposed} = await tree();
      const manifest = JSON.parse(
        fs.readFileSync(path.join(knowledge, 'demo/context_bundles/bundles', `${proposed.bundle_digest}.json`), 'utf8'),
      ) as {components: Array<Record<string, string>>};
      const hints = manifest.components.find((c) => c.kind === 'hints')!;
      expect(hints).toEqual({
        content: '',
        digest: nonPresentDigest({kind: 'hints', key: 'hints', media_type: 'text/markdown', state: 'ABSENT'}),
        key: 'hints',
        kind: 'hints',
        media_type: 'text/markdown',
        state: 'ABSENT',
      });
      expect(manifest.components.find((c) => c.kind === 'prompt_fragment')).toMatchObject({
        state: 'INCLUDED',
        media_type: 'text/plain',
      });
      const out = path.join(dir, 'out');
      const result = materialize({knowledge, scenario: 'demo', digest: proposed.bundle_digest, directory: out});
      expect(result.files.sort()).toEqual(['element_states.json', 'manifest.json', 'playbook/playbook.md']);
      expect(fs.existsSync(path.join(out, 'hints'))).toBe(false);
      const again = await propose({knowledge, scenario: 'demo', from: out});
      expect(again).toMatchObject({bundle_digest: proposed.bundle_digest, created: false});
      // A folder without states materializes with no element_states.json, as before.
      const plain = materialize({
        knowledge,
        scenario: 'demo',
        digest: proposed.parent_digest,
        directory: path.join(dir, 'plain'),
      });
      expect(plain.files).not.toContain('element_states.json');
    },
  );

  it(
    'shows a change of state in diff: PRESENT→ABSENT and ' +
      'ABSENT→PRESENT are changes (replacements), never additions',
    async () => {
      const {knowledge, proposed} = await tree();
      const d = diffBundles({knowledge, scenario: 'demo', a: proposed.bundle_digest, b: proposed.parent_digest});
      const hints = d.content_diffs.find((c) => c.component_kind === 'hints')!;
      expect(hints).toMatchObject({change: 'changed', comparison_state: 'PRESENT', tested_state: 'ABSENT'});
      const back = diffBundles({knowledge, scenario: 'demo', a: proposed.parent_digest, b: proposed.bundle_digest});
      expect(back.content_diffs.find((c) => c.component_kind === 'hints')).toMatchObject({
        change: 'changed',
        comparison_state: 'ABSENT',
        tested_state: 'PRESENT',
      });
      expect(
        back.manifest_diff.changes.find((c) => c.component_kind === 'hints')!.comparison_component_digest,
      ).not.toBeNull();
      expect(d.content_diffs.find((c) => c.component_kind === 'prompt_fragment')).toMatchObject({
        change: 'added',
        comparison_state: null,
        tested_state: 'INCLUDED',
      });
    },
  );

  it('never tags, renders or recalls a non-present component; verify notes the extension', async () => {
    const {dir, knowledge, proposed} = await tree();
    const absent = nonPresentDigest({kind: 'hints', key: 'hints', media_type: 'text/markdown', state: 'ABSENT'});
    const before = treeHash(knowledge);
    expect(await code(tagAdd({knowledge, scenario: 'demo', digest: absent}))).toBe('COMPONENT_NOT_FOUND');
    expect(treeHash(knowledge)).toBe(before);
    // A scenario whose serving bundle itself lacks its hints: a query naming them finds the playbook only, never the
    // absent hints.
    const from = writeSource(path.join(dir, 'stated'), {
      'playbook/playbook.md': 'Hints live in the playbook now: read the hints first.\n',
      'tool_guidance/notes.md': 'Ship notes every Friday.\n',
      'tool_guidance/sync.md': 'Restart the sync client.\n',
      'element_states.json': states([{kind: 'hints', key: 'hints', state: 'ABSENT', media_type: 'text/markdown'}]),
    });
    await init({knowledge, scenario: 'stated', from});
    const found = recall({knowledge, scenario: 'stated', query: 'hints'});
    expect(found.items.map((i) => `${i.component_kind}/${i.component_key}`)).toEqual(['playbook/playbook']);
    expect(JSON.stringify(render({knowledge, scenario: 'stated'}))).not.toContain(absent);
    expect(fs.existsSync(path.join(knowledge, 'stated/hints.md'))).toBe(false); // never mirrored
    expect(fs.existsSync(path.join(knowledge, 'stated/playbook.md'))).toBe(true);
    const v = await verify({knowledge, scenario: 'demo'});
    expect(v.errors).toEqual([]);
    expect(v.notes.filter((n) => n.code === 'ELEMENT_STATES').map((n) => n.file)).toEqual([
      `demo/context_bundles/bundles/${proposed.bundle_digest}.json`,
    ]);
  });

  it(
    'refuses a state declared for a component that has a file, a PRESENT ' +
      'declaration and an unknown field, naming element_states.json',
    async () => {
      const {dir, knowledge} = await tree();
      const before = treeHash(knowledge);
      const both = writeSource(path.join(dir, 'both'), {
        'hints/hints.md': 'x\n',
        'element_states.json': states([{kind: 'hints', key: 'hints', state: 'ABSENT'}]),
      });
      expect(await code(propose({knowledge, scenario: 'demo', from: both}))).toBe('DUPLICATE_COMPONENT');
      const present = writeSource(path.join(dir, 'present'), {
        'hints/hints.md': 'x\n',
        'element_states.json': states([{kind: 'playbook', key: 'playbook', state: 'PRESENT'}]),
      });
      expect(await code(propose({knowledge, scenario: 'demo', from: present}))).toBe('SCHEMA_VIOLATION');
      const extra = writeSource(path.join(dir, 'extra'), {
        'hints/hints.md': 'x\n',
        'element_states.json': states([{kind: 'playbook', key: 'playbook', state: 'ABSENT', content: ''}]),
      });
      expect(await code(propose({knowledge, scenario: 'demo', from: extra}))).toBe('SCHEMA_VIOLATION');
      expect(treeHash(knowledge)).toBe(before);
    },
  );
});
