import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {verify} from '../../src/core/common/verify.js';
import {runCliProcess} from '../helpers/cli.js';
import {commitAll, git, gitInit, mergeTaking} from '../helpers/git-histories.js';
import {mustIn} from '../helpers/knowledge-cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir} from '../helpers/tree.js';

/**
 * Two clones of one tree, each appending to the same history on its own branch, then merged with one side taken on
 * every conflicted file, as a hurried person resolves it. Every entry of both sides stays on disk (they are named by
 * their digests, so the two never write one path), and verify refuses the fork with DIVERGED, naming both files and
 * the way out; it never passes with a side's record silently lost.
 */
let base: Tree;
let x: string;
let y: string;
const dirs: string[] = [];

beforeAll(() => {
  base = makeTree();
  dirs.push(base.dir);
  x = base.propose('x', {'playbook/playbook.md': 'Be helpful and precise.\n', 'routing_config/roles.json': '{}'});
  y = base.propose('y', {'playbook/playbook.md': 'Be brief.\n', 'routing_config/roles.json': '{}'});
  for (const d of [x, y]) mustIn(base.knowledge, ['confirm', d, ...evalArgs()], 0, fakeEnv(base.dir));
  mustIn(base.knowledge, ['release', 'name', 'v1', base.baseline]);
  mustIn(base.knowledge, ['release', 'name', 'v2', x, '--rollback-target', 'v1']);
  mustIn(base.knowledge, ['release', 'name', 'v3', y, '--rollback-target', 'v1']);
}, 120_000);

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, {recursive: true, force: true});
});

/** A repository of a copy of the base tree, at the commit both branches start from. */
function repository(label: string): string {
  const knowledge = path.join(tempDir(`autoctx-fork-${label}-`), 'knowledge');
  dirs.push(path.dirname(knowledge));
  fs.cpSync(base.knowledge, knowledge, {recursive: true});
  gitInit(knowledge);
  return knowledge;
}

/** Alice's commands on a branch, Bob's on main, then Alice's branch merged into main taking `side`. */
function diverge(
  label: string,
  alice: (k: string) => void,
  bob: (k: string) => void,
  side: 'ours' | 'theirs',
): {knowledge: string; conflicted: string[]} {
  const k = repository(label);
  git(k, 'checkout', '-q', '-b', 'alice');
  alice(k);
  commitAll(k, 'alice');
  git(k, 'checkout', '-q', 'main');
  bob(k);
  commitAll(k, 'bob');
  return {knowledge: k, conflicted: mergeTaking(k, 'alice', side)};
}

/** The files of a history folder holding entries, relative to the knowledge root. */
function entries(knowledge: string, folder: string): string[] {
  const dir = path.join(knowledge, 'demo/context_bundles', folder);
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .map((n) => `demo/context_bundles/${folder}/${n}`)
    .sort();
}

/** verify's DIVERGED findings, and the CLI's exit code for the tree. */
function diverged(knowledge: string) {
  const r = verify({knowledge});
  const found = r.errors.filter((e) => e.code === 'DIVERGED');
  const exit = runCliProcess(['verify', '--knowledge', knowledge, '--json']).status;
  return {found, exit};
}

describe('histories that fork visibly under git merges', () => {
  for (const side of ['ours', 'theirs'] as const) {
    it(`two promotions from one parent, merged taking ${side}: both of the parent's ` +
      `record history entries are kept, and verify fails with DIVERGED naming both`, () => {
      const folder = `candidates/${base.baseline}/record_history`;
      const before = entries(base.knowledge, folder);
      const {knowledge} = diverge(
        `promote-${side}`,
        (k) => mustIn(k, ['promote', x]),
        (k) => mustIn(k, ['promote', y]),
        side,
      );
      const after = entries(knowledge, folder);
      // Each side's entry for the parent (active → superseded) is on disk: nothing was lost to the merge.
      expect(after.length).toBe(before.length + 2);
      const added = after.filter((f) => !before.includes(f));
      const {found, exit} = diverged(knowledge);
      expect(exit).toBe(8);
      // The fork in the parent's history, named by both entries.
      const fork = found.filter((e) => e.file.includes('/record_history/'));
      expect(fork.map((e) => e.file).sort()).toEqual(added);
      for (const e of fork) for (const f of added) expect(e.message).toContain(f);
      // And the promotion that never served, with its record (verify's check of the pointer's history).
      const moves = found.filter((e) => !e.file.includes('/record_history/')).map((e) => e.file);
      expect(moves).toHaveLength(2);
      expect(moves.filter((f) => new RegExp(`/candidates/(${x}|${y})/record\\.json$`).test(f))).toHaveLength(1);
      expect(moves.filter((f) => /\/promotions\/[0-9a-f]+\.json$/.test(f))).toHaveLength(1);
      for (const e of found) {
        expect(e.message).toContain('run autoctx reconcile');
        expect(e.message).not.toMatch(/interrupted|cut short/);
      }
    }, 60_000);
  }

  for (const side of ['ours', 'theirs'] as const) {
    it(`two release transitions on one scope, merged taking ${side}: both ` +
      `receipts are kept, and verify fails with DIVERGED naming both`, () => {
      const folder = 'releases/receipts/global';
      const {knowledge, conflicted} = diverge(
        `release-${side}`,
        (k) => mustIn(k, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'alice']),
        (k) => mustIn(k, ['release', 'transition', 'v3', '--to', 'SHADOW', '--rationale', 'bob']),
        side,
      );
      // The registry is the one file both changed: git makes a person choose a side of it.
      expect(conflicted).toEqual(['demo/context_bundles/releases/registry/global.json']);
      const files = entries(knowledge, folder);
      expect(files).toHaveLength(2);
      const rationales = files.map((f) => JSON.parse(fs.readFileSync(path.join(knowledge, f), 'utf8')).rationale);
      expect(rationales.sort()).toEqual(['alice', 'bob']);
      const {found, exit} = diverged(knowledge);
      expect(exit).toBe(8);
      expect(found.map((e) => e.file).sort()).toEqual(files);
      for (const e of found) {
        for (const f of files) expect(e.message).toContain(f);
        expect(e.message).toContain('run autoctx reconcile');
      }
      // A command that reads the receipts refuses the fork too, and names the way out.
      const listed = runCliProcess(['release', 'history', '--knowledge', knowledge, '--json']);
      expect(listed.status).toBe(8);
      expect(listed.json.error.message).toContain('run autoctx reconcile');
    }, 60_000);
  }

  it('two curation changes, merged taking ours: both curation ' +
    'entries are kept, and verify fails with DIVERGED naming both', () => {
    const folder = 'bootstrap/curation_history';
    const {knowledge, conflicted} = diverge(
      'curation',
      (k) => mustIn(k, ['grant', 'add', 'alices-team']),
      (k) => mustIn(k, ['grant', 'add', 'bobs-team']),
      'ours',
    );
    expect(conflicted).toEqual(['demo/context_bundles/bootstrap/curation.json']);
    const files = entries(knowledge, folder);
    expect(files).toHaveLength(2);
    const {found, exit} = diverged(knowledge);
    expect(exit).toBe(8);
    expect(found.map((e) => e.file).sort()).toEqual(files);
    for (const e of found) expect(e.message).toContain('run autoctx reconcile');
  }, 60_000);

  it('two handoff revisions, merged taking theirs: both revisions are kept (release-notes@2 ' +
    'of neither side is lost), and verify fails with DIVERGED naming both', () => {
    const k0 = repository('handoff-base');
    const notes = (k: string, text: string) => {
      const from = path.join(path.dirname(k), `${text}.json`);
      fs.writeFileSync(from, JSON.stringify({summary: text}));
      mustIn(k, ['handoff', 'write', '--id', 'release-notes', '--from', from]);
    };
    notes(k0, 'first');
    commitAll(k0, 'first revision');
    git(k0, 'checkout', '-q', '-b', 'alice');
    notes(k0, 'alice');
    commitAll(k0, 'alice');
    git(k0, 'checkout', '-q', 'main');
    notes(k0, 'bob');
    commitAll(k0, 'bob');
    mergeTaking(k0, 'alice', 'theirs');
    const files = entries(k0, 'bootstrap/handoffs/release-notes');
    expect(files).toHaveLength(3);
    const summaries = files.map((f) => JSON.parse(fs.readFileSync(path.join(k0, f), 'utf8')).content.summary);
    expect(summaries.sort()).toEqual(['alice', 'bob', 'first']);
    const {found, exit} = diverged(k0);
    expect(exit).toBe(8);
    // The two revisions 2, and the two curation entries that made each the head (a handoff write indexes it there).
    const second = files.filter((f) => JSON.parse(fs.readFileSync(path.join(k0, f), 'utf8')).revision === 2);
    expect(found.map((e) => e.file).filter((f) => f.includes('/handoffs/'))).toEqual(second.sort());
    expect(found.filter((e) => e.file.includes('/curation_history/'))).toHaveLength(2);
    for (const e of found) expect(e.message).toContain('run autoctx reconcile');
  }, 60_000);

  it('one branch only, merged: no fork, verify clean (a history ' +
    'appended on one side is an ordinary fast-forward)', () => {
    const k = repository('one-side');
    git(k, 'checkout', '-q', '-b', 'alice');
    mustIn(k, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'alice']);
    commitAll(k, 'alice');
    git(k, 'checkout', '-q', 'main');
    expect(mergeTaking(k, 'alice', 'ours')).toEqual([]);
    expect(verify({knowledge: k})).toMatchObject({status: 'ok', errors: []});
  }, 60_000);
});
