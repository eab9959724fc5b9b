import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {repair} from '../../src/core/common/repair.js';
import {init} from '../../src/core/common/init.js';
import {propose} from '../../src/core/promotion/propose.js';
import {evaluateCandidate} from '../../src/core/evaluation/evaluate.js';
import {promote} from '../../src/core/promotion/promote.js';
import {reject} from '../../src/core/promotion/reject.js';
import {rollback} from '../../src/core/rollback/rollback.js';
import {rolloverEpoch} from '../../src/core/rollback/epoch.js';
import {runCli} from '../helpers/cli.js';
import {FAKE, FIXTURES_12, POLICY_SMALL} from '../helpers/pipeline.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';
import {checkout, commitAll, copyTree, git, initRepo, merge, rebase, resolve, type Strategy} from '../helpers/git.js';

const ROLES = {'routing_config/roles.json': '{"model_competitor": "small"}'};
let seq = 0;

async function proposeFiles(knowledge: string, text: string): Promise<string> {
  const src = writeSource(path.join(path.dirname(knowledge), `src-${seq++}`), {'playbook/playbook.md': text, ...ROLES});
  const r = await propose({knowledge, scenario: 'demo', from: src, runId: `run-${seq}`});
  fs.rmSync(src, {recursive: true});
  return r.bundle_digest;
}

async function confirm(knowledge: string, candidate: string): Promise<void> {
  const r = await evaluateCandidate({
    knowledge,
    scenario: 'demo',
    candidate,
    evaluator: `node ${FAKE}`,
    evaluatorMode: 'persistent',
    fixtures: FIXTURES_12,
    policyFile: POLICY_SMALL,
    mode: 'confirm',
  });
  if (r.status !== 'confirmed') throw new Error(`confirm ${candidate}: ${r.status}`);
}

/**
 * A new candidate confirmed against the serving bundle. The fake evaluator's noise depends on the plan's seeds, which
 * depend on the candidate: a text whose run ends inconclusive is left (rejected) and the next one tried.
 */
async function confirmedCandidate(knowledge: string, text: string): Promise<string> {
  for (let i = 0; i < 6; i++) {
    const digest = await proposeFiles(knowledge, `${text} (${i})\n`);
    try {
      await confirm(knowledge, digest);
      return digest;
    } catch (error) {
      if (!String(error).includes('inconclusive')) throw error;
    }
  }
  throw new Error('no candidate confirmed');
}

/** The prepared trees every scenario starts from: copied, then made a repository. */
interface Bases {
  /** P serving, X and Y confirmed (both children of P). */
  siblings: string;
  /** X promoted from P; Z confirmed (a child of X). */
  promoted: string;
}
const ids = {P: '', X: '', Y: '', Z: ''};
let bases: Bases;

beforeAll(async () => {
  const dir = tempDir('autoctx-git-bases-');
  const siblings = path.join(dir, 'siblings');
  const knowledge = path.join(siblings, 'knowledge');
  const base = writeSource(path.join(dir, 'baseline'), {'playbook/playbook.md': 'Be helpful.\n', ...ROLES});
  ids.P = (await init({knowledge, scenario: 'demo', from: base})).bundle_digest;
  ids.X = await proposeFiles(knowledge, 'Be helpful and precise.\n');
  ids.Y = await proposeFiles(knowledge, 'Be helpful and brief.\n');
  await confirm(knowledge, ids.X);
  await confirm(knowledge, ids.Y);
  const promoted = copyTree(siblings, path.join(dir, 'promoted'));
  const k2 = path.join(promoted, 'knowledge');
  await promote({knowledge: k2, scenario: 'demo', candidate: ids.X});
  ids.Z = await proposeFiles(k2, 'Be helpful, precise and kind.\n');
  await confirm(k2, ids.Z);
  bases = {siblings, promoted};
}, 120_000);

/** A repository holding a copy of a base tree, committed on main. */
function repoOf(base: string): {repo: string; knowledge: string} {
  const repo = copyTree(base, path.join(tempDir('autoctx-git-'), 'repo'));
  initRepo(repo);
  return {repo, knowledge: path.join(repo, 'knowledge')};
}

/** Alice works on main, Bob on a branch made from it; each commits what they did. */
async function fork(
  base: string,
  alice: (knowledge: string) => Promise<unknown>,
  bob: (knowledge: string) => Promise<unknown>,
) {
  const {repo, knowledge} = repoOf(base);
  checkout(repo, 'bob', true);
  await bob(knowledge);
  commitAll(repo, 'bob');
  checkout(repo, 'main');
  await alice(knowledge);
  commitAll(repo, 'alice');
  return {repo, knowledge};
}

type Resolution = 'take ours' | 'take theirs' | '-X ours' | '-X theirs' | 'rebase ours' | 'rebase theirs';
const RESOLUTIONS: Resolution[] = ['take ours', 'take theirs', '-X ours', '-X theirs', 'rebase ours', 'rebase theirs'];

/** Bring Bob's branch into main the naive way named. */
function join(repo: string, how: Resolution): void {
  if (how.startsWith('rebase')) {
    checkout(repo, 'bob');
    rebase(repo, 'main', how === 'rebase ours' ? 'ours' : 'theirs');
    return;
  }
  const strategy: Strategy = how.startsWith('-X') ? (how as Strategy) : 'merge';
  const left = merge(repo, 'bob', strategy);
  if (left.length > 0) resolve(repo, how === 'take theirs' ? 'theirs' : 'ours');
}

function verifyCli(knowledge: string) {
  return runCli(['verify', '--knowledge', knowledge, '--json']);
}

const codes = (r: ReturnType<typeof verifyCli>) => ({
  status: r.status,
  errors: (r.json?.errors ?? []).map((e: {code: string; message: string}) => `${e.code}: ${e.message}`),
  warnings: (r.json?.warnings ?? []).map((e: {code: string; message: string}) => `${e.code}: ${e.message}`),
});

const SCENARIOS: Record<string, () => Promise<{repo: string; knowledge: string}>> = {
  'Alice rejects X, Bob promotes X': () =>
    fork(
      bases.siblings,
      (k) => reject({knowledge: k, scenario: 'demo', candidate: ids.X, rationale: 'not good enough'}),
      (k) => promote({knowledge: k, scenario: 'demo', candidate: ids.X}),
    ),
  'two promotions from one parent': () =>
    fork(
      bases.siblings,
      (k) => promote({knowledge: k, scenario: 'demo', candidate: ids.X}),
      (k) => promote({knowledge: k, scenario: 'demo', candidate: ids.Y}),
    ),
  "Bob's rollback overridden by Alice's promotion": () =>
    fork(
      bases.promoted,
      (k) => promote({knowledge: k, scenario: 'demo', candidate: ids.Z}),
      (k) => rollback({knowledge: k, scenario: 'demo', rationale: 'incident 7', actor: 'bob'}),
    ),
  "Bob's epoch rollover undone by Alice's promotion": () =>
    fork(
      bases.promoted,
      (k) => promote({knowledge: k, scenario: 'demo', candidate: ids.Z}),
      (k) => rolloverEpoch({knowledge: k, scenario: 'demo', evaluatorEpoch: 'epoch-2'}),
    ),
};

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
            /two clones' histories were merged; keep one side's knowledge\/ .* and make the other side's promotions/,
          );
        // Never the advice that an interrupted command left it (the next promote or repair would make it permanent).
        expect(r.warnings.filter((w: string) => w.startsWith('LIFECYCLE_PENDING'))).toEqual([]);
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
          String.raw`record\.json and .*promotions/.*\.json contradict each other: ` +
            "two clones' histories were merged; .*keep one side's knowledge/",
        ),
      );
      expect(treeHash(knowledge)).toBe(before);
      await expect(repair({knowledge})).rejects.toMatchObject({code: 'DIVERGED', exitCode: 8});
      expect(treeHash(knowledge)).toBe(before);
      const s = runCli(['status', '--knowledge', knowledge, '--json']);
      expect(s.status).toBe(0);
      expect(s.json.scenarios[0].diverged).toEqual([
        expect.stringMatching(/never served here.*keep one side's knowledge\//),
      ]);
      expect(s.json.scenarios[0].repairable).toEqual([]);
      const text = runCli(['status', '--knowledge', knowledge]).stdout;
      expect(text).toMatch(
        /diverged \(autoctx repair refuses\): two clones' histories were merged; keep one side's knowledge\//,
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
          /contradict each other; nothing was changed: two clones' histories were merged; keep one side's knowledge\//,
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
