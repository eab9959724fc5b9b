import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {repair} from '../../src/core/common/repair.js';
import {reconcile} from '../../src/core/common/reconcile/reconcile.js';
import {verify} from '../../src/core/common/verify.js';
import {promote} from '../../src/core/promotion/promote.js';
import {rollback} from '../../src/core/rollback/rollback.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, treeHash} from '../helpers/tree.js';
import {checkout, commitAll, git, merge} from '../helpers/git.js';
import {
  RESOLUTIONS,
  SCENARIOS,
  bases,
  codes,
  confirmedCandidate,
  fork,
  ids,
  join,
  makeBases,
  nothingLost,
  rejected,
  repoOf,
  serving,
  verifyCli,
} from '../helpers/git-team.js';

beforeAll(makeBases, 120_000);

/**
 * Each scenario: Alice works on main, Bob on a branch, each runs one ordinary command, and the branches are joined
 * the naive ways (a merge resolved by taking one side of every conflicted file, git's own -X ours / -X theirs, or a
 * rebase resolved the same way). No single clone can write what any of them leaves: verify fails with DIVERGED,
 * names the way out, and never calls it an interrupted command.
 */
describe('a merge no single clone could have written is DIVERGED (exit 8)', () => {
  for (const [name, make] of Object.entries(SCENARIOS))
    for (const how of RESOLUTIONS)
      it(`${name}, joined by ${how}`, async () => {
        const {repo, knowledge} = await make();
        join(repo, how);
        const r = codes(verifyCli(knowledge));
        expect(r.status).toBe(8);
        const diverged = r.errors.filter((e: string) => e.startsWith('DIVERGED: '));
        expect(diverged.length).toBeGreaterThan(0);
        for (const e of diverged)
          expect(e).toMatch(
            new RegExp(
              "two clones' histories were merged; run autoctx reconcile, which keeps one side's knowledge/ and " +
                "makes the other side's promotions",
            ),
          );
        // Never the advice that an interrupted command left it (the next promote or repair would make it permanent).
        expect(r.warnings.filter((w: string) => w.startsWith('LIFECYCLE_PENDING'))).toEqual([]);
        // The way out it names works: reconcile (a rebase names its two sides), then verify is clean, nothing either
        // side recorded is lost, and no rejected bundle serves.
        const sides = how.startsWith('rebase') ? {ours: 'main', theirs: 'ORIG_HEAD'} : {};
        const done = await reconcile({knowledge, ...sides});
        expect(verify({knowledge}).errors).toEqual([]);
        expect(rejected(knowledge)).not.toContain(serving(knowledge));
        nothingLost(repo, knowledge, done);
      });
});

describe('repair and status across a divergence', () => {
  it(
    'repair refuses with one line naming the way out, exit 8, ' + 'and leaves every byte; status calls it a divergence',
    async () => {
      const {repo, knowledge} = await SCENARIOS['two promotions from one parent']!();
      join(repo, 'take ours');
      const before = treeHash(knowledge);
      const r = runCli(['repair', '--knowledge', knowledge]);
      expect(r.status).toBe(8);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/DIVERGED/);
      expect(lines[0]).toMatch(
        new RegExp(
          String.raw`record\.json and .*promotions/.*\.json contradict each other; repair completes nothing ` +
            "across a divergence and changed nothing: two clones' histories were merged; run autoctx reconcile",
        ),
      );
      expect(treeHash(knowledge)).toBe(before);
      await expect(repair({knowledge})).rejects.toMatchObject({code: 'DIVERGED', exitCode: 8});
      expect(treeHash(knowledge)).toBe(before);
      const s = runCli(['status', '--knowledge', knowledge, '--json']);
      expect(s.status).toBe(0);
      expect(s.json.scenarios[0].diverged).toEqual([expect.stringMatching(/never served here.*run autoctx reconcile/)]);
      expect(s.json.scenarios[0].repairable).toEqual([]);
      const text = runCli(['status', '--knowledge', knowledge]).stdout;
      expect(text).toMatch(
        /diverged \(autoctx repair refuses\): two clones' histories were merged; run autoctx reconcile/,
      );
      expect(text).not.toMatch(/interrupted command/);
      expect(treeHash(knowledge)).toBe(before);
    },
  );

  it(
    'promote, rollback and epoch rollover refuse to move on from ' +
      'a divergence (DIVERGED, exit 8), changing nothing',
    async () => {
      const {repo, knowledge} = await SCENARIOS['two promotions from one parent']!();
      join(repo, 'take ours');
      const before = treeHash(knowledge);
      const args = ['--knowledge', knowledge, '--scenario', 'demo', '--json'];
      for (const command of [
        ['promote', ids.X],
        ['rollback', '--rationale', 'undo', '--actor', 'alice'],
        ['epoch', 'rollover', '--evaluator-epoch', 'epoch-2'],
        ['epoch', 'rollover', '--evaluator-epoch', 'epoch-1'],
      ]) {
        const r = runCli([...command, ...args]);
        expect({command, status: r.status, code: r.json?.error?.code}).toEqual({command, status: 8, code: 'DIVERGED'});
        expect(r.json.error.message).toMatch(
          /contradict each other; nothing was changed: two clones' histories were merged; run autoctx reconcile/,
        );
        expect(treeHash(knowledge)).toBe(before);
      }
    },
  );

  it('repair --help no longer suggests running repair whenever verify fails', () => {
    const help = runCli(['repair', '--help']).stdout;
    expect(help).not.toMatch(/verify \|\|/);
    expect(help).toMatch(/DIVERGED/);
    expect(help).toMatch(/keep one side\s+and\s+make\s+the\s+other\s+side's\s+changes\s+again/);
  });
});

describe('what a team does that keeps working', () => {
  it('a clone and a shallow clone of a tree with a promotion verify clean', async () => {
    const {repo, knowledge} = repoOf(bases.promoted);
    expect(verifyCli(knowledge).status).toBe(0);
    const dir = tempDir('autoctx-git-clones-');
    git(dir, ['clone', '-q', repo, 'full']);
    git(dir, ['clone', '-q', '--depth', '1', `file://${repo}`, 'shallow']);
    for (const clone of ['full', 'shallow']) {
      const r = codes(verifyCli(path.join(dir, clone, 'knowledge')));
      expect(r).toEqual({status: 0, errors: [], warnings: []});
    }
  });

  it('a checkout of an old commit verifies clean, and so does coming back', async () => {
    const {repo, knowledge} = repoOf(bases.siblings);
    await promote({knowledge, scenario: 'demo', candidate: ids.X});
    commitAll(repo, 'promote X');
    await rollback({knowledge, scenario: 'demo', rationale: 'incident 9', actor: 'alice'});
    commitAll(repo, 'roll back X');
    for (const rev of ['main~1', 'main~2', 'main']) {
      git(repo, ['checkout', '-q', rev]);
      expect(codes(verifyCli(knowledge))).toEqual({status: 0, errors: [], warnings: []});
    }
  });

  for (const side of ['take ours', 'take theirs'] as const)
    it(
      `two rollbacks of one state on two branches, merged by ${side}: both rollback ` +
        `records and both sides' history entries are kept, and the fork is named`,
      async () => {
        const {repo, knowledge} = await fork(
          bases.promoted,
          (k) => rollback({knowledge: k, scenario: 'demo', rationale: 'incident A', actor: 'alice'}),
          (k) => rollback({knowledge: k, scenario: 'demo', rationale: 'incident B', actor: 'bob'}),
        );
        join(repo, side);
        // Each clone recorded its own change of the same records: one side's entries are no longer dropped by the merge
        // (as they were while entries were named by their position), so the histories fork, and verify names only that.
        const rollbacks = fs
          .readdirSync(path.join(knowledge, 'demo/context_bundles/rollbacks'))
          .filter((f) => f.startsWith('RBX-'));
        expect(rollbacks).toHaveLength(2);
        const r = codes(verifyCli(knowledge));
        expect(r.status).toBe(8);
        // One fork in each of the two records' histories, named at each of its two entries.
        expect(r.errors).toHaveLength(4);
        expect(new Set(r.errors).size).toBe(2);
        for (const e of r.errors) expect(e).toMatch(/^DIVERGED: .*\/record_history\/[0-9a-f]{64}\.json and /);
      },
    );

  it(
    'branches that only propose and confirm, promoted after the ' +
      'merge: the second is a stale rejection, verify clean',
    async () => {
      const {repo, knowledge} = repoOf(bases.siblings);
      checkout(repo, 'bob', true);
      const b = await confirmedCandidate(knowledge, 'Be helpful and exact.');
      commitAll(repo, 'bob proposes');
      checkout(repo, 'main');
      const a = await confirmedCandidate(knowledge, 'Be helpful and clear.');
      commitAll(repo, 'alice proposes');
      expect(merge(repo, 'bob')).toEqual([]);
      expect(codes(verifyCli(knowledge))).toEqual({status: 0, errors: [], warnings: []});
      await promote({knowledge, scenario: 'demo', candidate: a});
      const stale = runCli(['promote', b, '--knowledge', knowledge, '--scenario', 'demo', '--json']);
      expect(stale.status).toBe(6);
      expect(codes(verifyCli(knowledge))).toEqual({status: 0, errors: [], warnings: []});
    },
  );
});

describe('git stash right after an uncommitted promotion', () => {
  /** The promotion's new files stay (untracked), the files it changed go back. */
  async function stashed() {
    const {repo, knowledge} = repoOf(bases.siblings);
    await promote({knowledge, scenario: 'demo', candidate: ids.X});
    git(repo, ['stash', '-q']);
    const left = git(repo, ['status', '--porcelain', '--untracked-files=all']).stdout;
    expect(left).toMatch(/\?\? knowledge\/demo\/context_bundles\/promotions\/[0-9a-f]+\.json/);
    const r = codes(verifyCli(knowledge));
    expect(r.status).toBe(0);
    expect(r.warnings).toEqual(
      expect.arrayContaining([expect.stringMatching(/^MOVE_PENDING: .*running it again completes it/)]),
    );
    return {repo, knowledge};
  }

  it('following verify: running the promotion again completes it, and verify is clean', async () => {
    const {knowledge} = await stashed();
    const again = runCli(['promote', ids.X, '--knowledge', knowledge, '--scenario', 'demo', '--json']);
    expect(again.status).toBe(0);
    expect(codes(verifyCli(knowledge))).toEqual({status: 0, errors: [], warnings: []});
  });

  it(
    'following verify the other way: repair completes no lifecycle of a move ' +
      'the pointer does not show, names the command, which then completes it',
    async () => {
      const {knowledge} = await stashed();
      const r = runCli(['repair', '--knowledge', knowledge, '--json']);
      expect(r.status).toBe(0);
      expect(r.json.remaining).toEqual(
        expect.arrayContaining([
          expect.stringMatching(new RegExp(`run the same promotion again \\(autoctx promote ${ids.X}\\)`)),
        ]),
      );
      expect(codes(verifyCli(knowledge)).errors).toEqual([]);
      const again = runCli(['promote', ids.X, '--knowledge', knowledge, '--scenario', 'demo', '--json']);
      expect(again.status).toBe(0);
      expect(codes(verifyCli(knowledge))).toEqual({status: 0, errors: [], warnings: []});
    },
  );
});
