import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {runCliProcess} from '../helpers/cli.js';
import {copySampleKnowledge, tempDir, treeHash, writeSource} from '../helpers/tree.js';

// Without --knowledge or AUTOCTX_KNOWLEDGE, autoctx finds the knowledge root as git finds its repository: from the
// working folder up, the first folder F for which F/knowledge, or else F itself, is a knowledge root; the walk stops
// after the top of a git work tree.
function project(playbook = 'Be helpful.\n') {
  const dir = tempDir('autoctx-root-search-');
  const src = writeSource(path.join(dir, 'baseline'), {'playbook/playbook.md': playbook});
  const init = runCliProcess(['init', '--scenario', 'review', '--from', src, '--json'], {cwd: dir});
  expect(init.status).toBe(0);
  return {dir, knowledge: path.join(dir, 'knowledge'), active: init.json.bundle_digest as string};
}

const scenariosSeen = (cwd: string, env?: NodeJS.ProcessEnv) => {
  const r = runCliProcess(['status', '--json'], {cwd, env});
  return {status: r.status, scenarios: r.json?.scenarios?.map((s: {scenario: string}) => s.scenario), stderr: r.stderr};
};

describe('the knowledge root, looked for in parent folders', () => {
  it('is found from inside the tree and from any folder of the project below its root', () => {
    const p = project();
    for (const cwd of [
      p.dir,
      p.knowledge,
      path.join(p.knowledge, 'review'),
      path.join(p.knowledge, 'review', 'context_bundles', 'bundles'),
      path.join(p.dir, 'src', 'deep', 'er'),
    ]) {
      fs.mkdirSync(cwd, {recursive: true});
      expect([cwd, scenariosSeen(cwd)]).toEqual([cwd, {status: 0, scenarios: ['review'], stderr: ''}]);
    }
  });

  it('is where a command run from inside the tree writes', () => {
    const p = project();
    const src = writeSource(path.join(p.dir, 'candidate'), {'playbook/playbook.md': 'Be brief.\n'});
    const r = runCliProcess(['propose', '--from', src, '--json'], {cwd: path.join(p.knowledge, 'review')});
    expect(r.status).toBe(0);
    expect(fs.existsSync(path.join(p.knowledge, 'review/context_bundles/candidates', r.json.bundle_digest))).toBe(true);
    expect(fs.existsSync(path.join(p.knowledge, 'review', 'knowledge'))).toBe(false);
  });

  it('is found in a tree the Python implementation wrote (no state area)', () => {
    const knowledge = copySampleKnowledge();
    expect(scenariosSeen(path.join(knowledge, 'demo')).scenarios).toEqual(['demo']);
  });

  it('is not looked for above the top of a git work tree, and --knowledge and AUTOCTX_KNOWLEDGE still win', () => {
    const p = project();
    const inner = path.join(p.dir, 'inner');
    fs.mkdirSync(path.join(inner, '.git'), {recursive: true});
    fs.mkdirSync(path.join(inner, 'sub'));
    const before = treeHash(p.dir);
    const r = runCliProcess(['status'], {cwd: path.join(inner, 'sub')});
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `error KNOWLEDGE_NOT_FOUND: no knowledge folder at ${path.join(inner, 'sub', 'knowledge')} ` +
        '(use --knowledge DIR, or run autoctx init)\n',
    );
    expect(treeHash(p.dir)).toBe(before);

    const other = project('Another project.\n');
    const cwd = path.join(p.knowledge, 'review');
    expect(runCliProcess(['status', '--json', '--knowledge', other.knowledge], {cwd}).json.scenarios[0].active).toEqual(
      expect.objectContaining({bundle_digest: other.active}),
    );
    const fromEnv = runCliProcess(['status', '--json'], {cwd, env: {AUTOCTX_KNOWLEDGE: other.knowledge}});
    expect(fromEnv.json.scenarios[0].active.bundle_digest).toBe(other.active);
    expect(other.active).not.toBe(p.active);
  });
});
