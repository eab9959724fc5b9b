import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {AutoctxError} from '../../src/errors.js';
import {outcomeOfError} from '../../src/hooks/run.js';
import {GITATTRIBUTES_BLOCK} from '../../src/store/kinds/common/gitattributes.js';
import {runCli} from '../helpers/cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';

/**
 * Safe checkouts, with real git: the .gitattributes init and repair write (no end-of-line conversion, no silent merge
 * of a mutable document), and what every reader says of a tree git converted (LINE_ENDINGS), of a merge left
 * unfinished (MERGE_CONFLICT) and of a document naming a key twice (DUPLICATE_KEY). Each repository is made in a
 * temporary folder with its own user; git's global and system configuration are not read.
 */
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

function git(cwd: string, args: string[], exit: number | null = 0): string {
  const r = spawnSync('git', args, {cwd, env: GIT_ENV, encoding: 'utf8'});
  if (exit !== null && r.status !== exit)
    throw new Error(`git ${args.join(' ')} → ${r.status}: ${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}

/** A new repository at `dir` holding a copy of `knowledge` (less its per-machine state) in knowledge/, committed. */
function repoOf(knowledge: string, label: string, options: {attributes: boolean}): string {
  const dir = tempDir(`autoctx-git-${label}-`);
  fs.cpSync(knowledge, path.join(dir, 'knowledge'), {
    recursive: true,
    filter: (src) => path.relative(knowledge, src).split(path.sep)[0] !== '.state',
  });
  if (!options.attributes) fs.rmSync(path.join(dir, 'knowledge/.gitattributes'), {force: true});
  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['config', 'user.name', 'Test']);
  git(dir, ['config', 'user.email', 'test@example.com']);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'knowledge']);
  return dir;
}

const ax = (knowledge: string, args: string[], json = true) =>
  runCli([...args, '--knowledge', knowledge, ...(json ? ['--json'] : [])]);

let base: Tree;
/** Two candidates confirmed against the baseline, X and Y: each branch promotes one. */
let X: string;
let Y: string;
/** A signed copy of the tree: signing started, then X promoted with the key. */
let signed: string;

beforeAll(() => {
  base = makeTree();
  X = base.propose('x', {
    'playbook/playbook.md': 'Be precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  Y = base.propose('y', {
    'playbook/playbook.md': 'Be brief.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  for (const d of [X, Y]) {
    const r = base.cli(['confirm', d, ...evalArgs()], fakeEnv(base.dir));
    if (r.status !== 0) throw new Error(r.stdout + r.stderr);
  }
  const dir = tempDir('autoctx-git-signed-');
  signed = path.join(dir, 'knowledge');
  fs.cpSync(base.knowledge, signed, {recursive: true});
  const key = path.join(dir, 'key-alice');
  const k = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice', '-f', key], {encoding: 'utf8'});
  if (k.status !== 0) throw new Error(k.stderr);
  const pub = fs.readFileSync(`${key}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  fs.writeFileSync(path.join(dir, 'allowed_signers'), `alice@x namespaces="autoctx" ${pub}\n`);
  for (const args of [
    ['signing', 'start', '--from', path.join(dir, 'allowed_signers'), '--signing-key', key, '--actor', 'alice@x'],
    ['promote', X, '--signing-key', key, '--actor', 'alice@x'],
  ]) {
    const r = ax(signed, args);
    if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stdout}${r.stderr}`);
  }
});

describe('the .gitattributes init writes', () => {
  it(
    "is autoctx's block, byte for byte, and git reads it: no conversion, " +
      'no merge of the mutable documents, derived files folded',
    () => {
      expect(fs.readFileSync(path.join(base.knowledge, '.gitattributes'), 'utf8')).toBe(GITATTRIBUTES_BLOCK);
      const dir = repoOf(base.knowledge, 'attrs', {attributes: true});
      const attr = (file: string, name: string) =>
        git(path.join(dir, 'knowledge'), ['check-attr', name, '--', file]).trim().split(': ').at(-1);
      const mutable = [
        'demo/context_bundles/active.json',
        `demo/context_bundles/candidates/${X}/record.json`,
        'demo/context_bundles/record_histories.json',
        'demo/context_bundles/releases/registry/default.json',
        'demo/context_bundles/bootstrap/curation.json',
        `demo/context_bundles/candidates/${X}/record_history/000001.json`,
        'demo/playbook.md',
        'autoctx.config.json',
      ];
      for (const f of mutable) expect([f, attr(f, 'merge'), attr(f, 'text')]).toEqual([f, 'unset', 'unset']);
      for (const f of ['demo/playbook.md', `demo/context_bundles/bundles/${X}.json`])
        expect([f, attr(f, 'linguist-generated')]).toEqual([f, 'set']);
      expect(attr('demo/context_bundles/active.json', 'linguist-generated')).toBe('unspecified');
      const v = ax(base.knowledge, ['verify']);
      expect(v.json).toMatchObject({status: 'ok', errors: [], warnings: []});
    },
  );

  it(
    'an older tree lacks it: a warning, and repair writes it; a ' +
      "person's own file gets the block appended, their lines kept",
    () => {
      const k = path.join(tempDir('autoctx-git-old-'), 'knowledge');
      fs.cpSync(base.knowledge, k, {recursive: true});
      fs.rmSync(path.join(k, '.gitattributes'));
      const v = ax(k, ['verify']);
      expect(v.status).toBe(0);
      expect(v.json.warnings.map((w: {code: string; file: string}) => `${w.code} ${w.file}`)).toEqual([
        'GITATTRIBUTES_MISSING .gitattributes',
      ]);
      expect(v.json.warnings[0].message).toContain('autoctx repair');
      const r = ax(k, ['repair']);
      expect(r.json.actions).toContain(
        'wrote .gitattributes (no end-of-line conversion, no silent merge of mutable documents)',
      );
      expect(fs.readFileSync(path.join(k, '.gitattributes'), 'utf8')).toBe(GITATTRIBUTES_BLOCK);
      expect(ax(k, ['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});

      fs.writeFileSync(path.join(k, '.gitattributes'), '*.png binary\n');
      expect(ax(k, ['verify']).json.warnings.map((w: {code: string}) => w.code)).toEqual(['GITATTRIBUTES_MISSING']);
      expect(ax(k, ['repair']).json.actions).toContain(
        "appended autoctx's block to .gitattributes (the lines already there are kept)",
      );
      expect(fs.readFileSync(path.join(k, '.gitattributes'), 'utf8')).toBe(`*.png binary\n${GITATTRIBUTES_BLOCK}`);
      expect(ax(k, ['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
    },
  );

  it(
    'an edited block, or a rule after it that overrides it, is an ' +
      "error; repair writes the block back and keeps the person's lines",
    () => {
      const k = path.join(tempDir('autoctx-git-edited-'), 'knowledge');
      fs.cpSync(base.knowledge, k, {recursive: true});
      const file = path.join(k, '.gitattributes');
      const mine = '*.png binary\n';
      const cases: Array<[string, string]> = [
        [
          `${mine}${GITATTRIBUTES_BLOCK.replace('*/context_bundles/active.json -merge\n', '')}`,
          `${mine}${GITATTRIBUTES_BLOCK}`,
        ],
        [
          `${mine}${GITATTRIBUTES_BLOCK.replace('# autoctx: begin', '# autoctx: bgin')}`,
          `${mine}${GITATTRIBUTES_BLOCK}`,
        ],
        [`${mine}${GITATTRIBUTES_BLOCK}* merge=union\n`, `${mine}* merge=union\n${GITATTRIBUTES_BLOCK}`],
      ];
      for (const [edited, restored] of cases) {
        fs.writeFileSync(file, edited);
        const v = ax(k, ['verify']);
        expect(v.status).toBe(8);
        expect(v.json.errors.map((e: {code: string; file: string}) => `${e.code} ${e.file}`)).toEqual([
          'GITATTRIBUTES_MODIFIED .gitattributes',
        ]);
        expect(ax(k, ['repair']).json.actions).toContain(
          "restored autoctx's block in .gitattributes (the lines outside it are kept)",
        );
        expect(fs.readFileSync(file, 'utf8')).toBe(restored);
        expect(ax(k, ['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
      }
    },
  );
});

describe('two branches that each promote, merged', () => {
  /** A repository whose branches a and b promote X and Y from one commit; returns it with b being merged into a. */
  function mergeOfTwoPromotions(attributes: boolean): {dir: string; k: string; merge: string} {
    const dir = repoOf(base.knowledge, attributes ? 'merge' : 'merge-old', {attributes});
    const k = path.join(dir, 'knowledge');
    git(dir, ['checkout', '-q', '-b', 'b']);
    expect(ax(k, ['promote', Y]).status).toBe(0);
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'promote Y']);
    git(dir, ['checkout', '-q', '-b', 'a', 'main']);
    expect(ax(k, ['promote', X]).status).toBe(0);
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'promote X']);
    return {dir, k, merge: git(dir, ['merge', 'b', '-m', 'merge b'], 1)};
  }

  it('with the .gitattributes: the mutable documents conflict and hold no merged text (ours stays whole)', () => {
    const {dir, k, merge} = mergeOfTwoPromotions(true);
    expect(merge).toContain('CONFLICT');
    const unmerged = git(dir, ['diff', '--name-only', '--diff-filter=U']).split('\n');
    expect(unmerged).toEqual(
      expect.arrayContaining(['knowledge/demo/context_bundles/active.json', 'knowledge/demo/playbook.md']),
    );
    const active = fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8');
    expect(active).not.toContain('<<<<<<<');
    expect(JSON.parse(active).bundle_digest).toBe(X);
  });

  it(
    'without it (an older tree): the markers git leaves are MERGE_CONFLICT for verify, ' +
      'status and route, naming the file and how to finish the merge, and nothing is written',
    () => {
      const {dir, k, merge} = mergeOfTwoPromotions(false);
      expect(merge).toContain('CONFLICT');
      expect(fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8')).toContain('<<<<<<< ');
      const before = treeHash(k);
      const v = ax(k, ['verify']);
      expect(v.status).toBe(8);
      const conflicts = v.json.errors.filter((e: {code: string}) => e.code === 'MERGE_CONFLICT');
      expect(conflicts.map((e: {file: string}) => e.file)).toContain('demo/context_bundles/active.json');
      expect(conflicts[0].message).toContain('finish the merge with autoctx reconcile');

      for (const command of [['status'], ['route']]) {
        const r = ax(k, command, false);
        expect([command[0], r.status]).toEqual([command[0], 8]);
        expect(r.stderr.trim().split('\n')).toEqual([
          expect.stringMatching(
            new RegExp(
              '^error MERGE_CONFLICT: demo/context_bundles/active\\.json holds git conflict markers.*' +
                'finish the merge with autoctx reconcile',
            ),
          ),
        ]);
      }
      expect(treeHash(k)).toBe(before);
      // The documents taken from one side, the mirror left as git merged it: the mirror's check (it is no JSON
      // document)
      // finds a text no bundle holds, and says what git did instead of calling it edited.
      git(dir, ['checkout', '--ours', '--', 'knowledge/demo/context_bundles']);
      const mirror = ax(k, ['verify']);
      expect(mirror.json.errors).toContainEqual(
        expect.objectContaining({code: 'MERGE_CONFLICT', file: 'demo/playbook.md'}),
      );
      expect(mirror.json.errors.map((e: {code: string}) => e.code)).not.toContain('MIRROR_MISMATCH');
    },
  );
});

describe('a checkout with core.autocrlf=true', () => {
  it("git converts autoctx's files when the tree has no .gitattributes (the condition the readers must name)", () => {
    const dir = repoOf(signed, 'crlf-probe', {attributes: false});
    const clone = path.join(tempDir('autoctx-git-clone-'), 'c');
    git(dir, ['clone', '-q', '-c', 'core.autocrlf=true', dir, clone]);
    const active = fs.readFileSync(path.join(clone, 'knowledge/demo/context_bundles/active.json'), 'utf8');
    expect(active).toContain('\r\n');
  });

  it(
    'of a signed tree without .gitattributes: every reader says ' +
      'LINE_ENDINGS, one code, never an edit, and nothing is written',
    () => {
      const dir = repoOf(signed, 'crlf', {attributes: false});
      const clone = path.join(tempDir('autoctx-git-clone-'), 'c');
      git(dir, ['clone', '-q', '-c', 'core.autocrlf=true', dir, clone]);
      const k = path.join(clone, 'knowledge');
      const before = treeHash(k);
      const v = ax(k, ['verify']);
      expect(v.status).toBe(8);
      expect(v.json.errors.length).toBeGreaterThan(5);
      expect([...new Set(v.json.errors.map((e: {code: string}) => e.code))]).toEqual(['LINE_ENDINGS']);
      for (const e of v.json.errors) {
        expect(e.message).toContain('git config core.autocrlf false');
        expect(e.message).not.toMatch(/edited|by hand/);
      }
      expect(v.json.errors.map((e: {file: string}) => e.file)).toContain('demo/context_bundles/active.json');
      for (const command of [['status'], ['route']]) {
        const r = ax(k, command, false);
        expect([command[0], r.status]).toEqual([command[0], 8]);
        expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error LINE_ENDINGS: .*core\.autocrlf/)]);
      }
      expect(treeHash(k)).toBe(before);
      // The fix the message gives works.
      git(clone, ['config', 'core.autocrlf', 'false']);
      git(clone, ['checkout', '--', 'knowledge']);
      expect(ax(k, ['verify']).json).toMatchObject({status: 'ok', errors: []});
    },
  );

  it('of a tree with the .gitattributes: nothing is converted, and verify is clean', () => {
    const dir = repoOf(signed, 'crlf-attrs', {attributes: true});
    const clone = path.join(tempDir('autoctx-git-clone-'), 'c');
    git(dir, ['clone', '-q', '-c', 'core.autocrlf=true', dir, clone]);
    const k = path.join(clone, 'knowledge');
    expect(fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8')).not.toContain('\r');
    expect(ax(k, ['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
  });

  it('the hook reports a converted or conflicted tree as broken, as it does an edited one', () => {
    for (const code of ['LINE_ENDINGS', 'MERGE_CONFLICT'] as const)
      expect(outcomeOfError(new AutoctxError(code, 'x'))).toBe('tree_broken');
  });
});

describe('a document naming a key twice', () => {
  it(
    'active.json with two bundle_digest keys is refused by verify (DUPLICATE_KEY, naming ' +
      'the file and the key) and by route, which serves nothing; nothing is written',
    () => {
      const k = path.join(tempDir('autoctx-git-dup-'), 'knowledge');
      fs.cpSync(base.knowledge, k, {recursive: true});
      const file = path.join(k, 'demo/context_bundles/active.json');
      const text = fs.readFileSync(file, 'utf8');
      const baseline = JSON.parse(text).bundle_digest as string;
      fs.writeFileSync(
        file,
        text.replace(`"bundle_digest": "${baseline}",`, `"bundle_digest": "${baseline}",\n  "bundle_digest": "${X}",`),
      );
      const before = treeHash(k);
      const v = ax(k, ['verify']);
      expect(v.status).toBe(8);
      expect(v.json.errors.map((e: {code: string; file: string}) => `${e.code} ${e.file}`)).toContain(
        'DUPLICATE_KEY demo/context_bundles/active.json',
      );
      expect(v.json.errors.find((e: {code: string}) => e.code === 'DUPLICATE_KEY').message).toContain(
        '"bundle_digest"',
      );
      const r = ax(k, ['route'], false);
      expect(r.status).toBe(8);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/active\.json: the key "bundle_digest" appears twice/);
      expect(treeHash(k)).toBe(before);
    },
  );

  it('in a file passed in is DUPLICATE_KEY (exit 2), naming the key, and nothing is written', () => {
    const k = path.join(tempDir('autoctx-git-dup-input-'), 'knowledge');
    fs.cpSync(base.knowledge, k, {recursive: true});
    const manifest = path.join(path.dirname(k), 'candidate.json');
    fs.writeFileSync(
      manifest,
      '{"scenario": "demo", "evaluator_epoch": "epoch-1", "evaluator_epoch": "epoch-2", "parent_digest": ' +
        'null, "components": [{"kind": "hints", "key": "h", "content": "x", "media_type": "text/plain"}]}',
    );
    const before = treeHash(k);
    const r = ax(k, ['propose', '--from', manifest]);
    expect(r.status).toBe(2);
    expect(r.json.error.code).toBe('DUPLICATE_KEY');
    expect(r.json.error.message).toContain('"evaluator_epoch"');
    expect(treeHash(k)).toBe(before);
  });
});
