import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from '@jest/globals';
import {applyPatch} from 'diff';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCliProcess} from '../helpers/cli.js';
import {makeTree, type Tree} from '../helpers/pipeline.js';

// Diff shows content, a unified diff per changed component for people, patches and hunks in --json.
const trees: Tree[] = [];
afterEach(() => trees.splice(0).forEach((t) => fs.rmSync(t.dir, {recursive: true, force: true})));

function twoBundles() {
  const t = makeTree();
  trees.push(t);
  const active = JSON.parse(fs.readFileSync(t.file('active.json'), 'utf8')).bundle_digest as string;
  const base = JSON.parse(fs.readFileSync(t.file(`bundles/${active}.json`), 'utf8'));
  const playbook = base.components.find((c: {kind: string}) => c.kind === 'playbook');
  const lines = ['# Support', '', ...Array.from({length: 12}, (_, i) => `${i + 1}. step ${i + 1}`), ''];
  const c = t.propose('c', {
    'playbook/playbook.md': lines.join('\n').replace('6. step 6', '6. step six, reworded'),
    'routing_config/roles.json': '{"model_competitor": "large", "model_coach": "small"}',
    'hints/extra.md': 'A new hint.\n',
  });
  return {t, active, c, playbookBefore: playbook?.content as string | undefined, lines};
}
const cli = (t: Tree, args: string[]) => runCliProcess([...args, '--knowledge', t.knowledge], {env: {NO_COLOR: '1'}});

describe('autoctx diff', () => {
  it(
    'shows each changed component as a unified diff from B to A, ' +
      "and --json gives patches that turn B's text into A's",
    () => {
      const {t, active, c} = twoBundles();
      const human = cli(t, ['diff', c, active]);
      expect(human.status).toBe(0);
      expect(human.stdout).toMatch(/^~ playbook\/playbook {2}[0-9a-f]{12} -> [0-9a-f]{12} {2}\(\+\d+ -\d+\)$/m);
      // Labelled as git labels a diff: a/ the text it goes from (B), b/ the text it goes to (A).
      expect(human.stdout).toContain('--- a/playbook/playbook.md\n+++ b/playbook/playbook.md\n');
      expect(human.stdout).not.toMatch(/^--- b\/|^\+\+\+ a\//m);
      expect(human.stdout).toMatch(/^\+6\. step six, reworded$/m);
      expect(human.stdout).toMatch(/^\+ hints\/extra {2}- -> [0-9a-f]{12} {2}\(\+1 -0\)$/m);
      expect(human.stdout).toContain('--- /dev/null\n+++ b/hints/extra.md\n@@ -0,0 +1,1 @@\n+A new hint.');
      // JSON components are compared pretty-printed, so a changed value is one line.
      expect(human.stdout).toMatch(/^-\s+"model_competitor": "small"$/m);
      expect(human.stdout).toMatch(/^\+\s+"model_competitor": "large"$/m);

      const json = cli(t, ['diff', c, active, '--json']).json;
      expect(resultSchemaProblem('result-diff', json)).toBeNull();
      expect(
        json.content_diffs.map((d: {component_kind: string; component_key: string; change: string}) => [
          d.component_kind,
          d.component_key,
          d.change,
        ]),
      ).toEqual(
        json.manifest_diff.changes.map(
          (ch: {component_kind: string; component_key: string; comparison_component_digest: string | null}) => [
            ch.component_kind,
            ch.component_key,
            ch.comparison_component_digest === null ? 'added' : 'changed',
          ],
        ),
      );
      // The patch is a real one: applied to B's text it gives A's.
      const text = (digest: string, kind: string) =>
        JSON.parse(fs.readFileSync(t.file(`bundles/${digest}.json`), 'utf8')).components.find(
          (x: {kind: string}) => x.kind === kind,
        )?.content ?? '';
      const playbook = json.content_diffs.find((d: {component_kind: string}) => d.component_kind === 'playbook');
      expect(applyPatch(text(active, 'playbook'), playbook.patch)).toBe(text(c, 'playbook'));
    },
  );

  it(
    '--stat lists the components and their line counts only; the ' + 'other way round, an added component is a removal',
    () => {
      const {t, active, c} = twoBundles();
      const stat = cli(t, ['diff', c, active, '--stat']);
      expect(stat.stdout).not.toContain('@@');
      expect(
        stat.stdout
          .trim()
          .split('\n')
          .slice(1)
          .every((l) => /^ {2}[+~-] /.test(l)),
      ).toBe(true);
      const back = cli(t, ['diff', active, c, '--json']).json;
      expect(back.content_diffs.find((d: {component_key: string}) => d.component_key === 'extra')).toMatchObject({
        change: 'removed',
        added_lines: 0,
        removed_lines: 1,
      });
    },
  );

  it('a bundle against itself: no changes, no text', () => {
    const {t, active} = twoBundles();
    const r = cli(t, ['diff', active, active]);
    expect(r.stdout.trim()).toBe(`${active.slice(0, 12)} against ${active.slice(0, 12)}: 0 changes`);
  });
});

describe('autoctx diff, applied by git', () => {
  it("is a patch git apply takes as it is: applied to B's files, it gives A's", () => {
    const t = makeTree();
    trees.push(t);
    const active = JSON.parse(fs.readFileSync(t.file('active.json'), 'utf8')).bundle_digest as string;
    const c = t.propose('c', {
      'playbook/playbook.md': 'Be helpful.\nAsk for the sync log first.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
      'hints/extra.md': 'A new hint.\n',
    });
    const work = path.join(t.dir, 'applied');
    expect(cli(t, ['bundle', 'materialize', active, work]).status).toBe(0);
    const patch = cli(t, ['diff', c, active]).stdout.split('\n');
    const body = patch
      .slice(patch.findIndex((l) => l.startsWith('--- ')))
      .filter((l) => !/^[~+-] \S+\/\S+ {2}/.test(l));
    fs.writeFileSync(path.join(t.dir, 'change.patch'), `${body.join('\n').trimEnd()}\n`);
    const git = spawnSync('git', ['apply', path.join(t.dir, 'change.patch')], {
      cwd: work,
      encoding: 'utf8',
    });
    expect([git.status, git.stderr]).toEqual([0, '']);
    expect(fs.readFileSync(path.join(work, 'playbook/playbook.md'), 'utf8')).toBe(
      'Be helpful.\nAsk for the sync log first.\n',
    );
    expect(fs.readFileSync(path.join(work, 'hints/extra.md'), 'utf8')).toBe('A new hint.\n');
  });
});
