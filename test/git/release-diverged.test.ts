import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {reconcile} from '../../src/core/common/reconcile/reconcile.js';
import {verify} from '../../src/core/common/verify.js';
import {runCli} from '../helpers/cli.js';
import {checkout, commitAll, initRepo, merge, rebase, resolve, type Strategy} from '../helpers/git.js';
import {mustIn} from '../helpers/knowledge-cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';

/**
 * Release transitions on two branches of one repository, joined the naive ways (a merge taking one side of every
 * conflicted file, git's -X ours / -X theirs, a rebase taking either side). One command appends one receipt to a
 * scope's chain, after the one before, then writes the registry: two receipts that follow the same one are no prefix of
 * any command's writes, in any clone. verify names both receipts and the way out (DIVERGED), never a tampered registry
 * or a rejected bundle serving; repair, status and release transition treat it as they treat the pointer's
 * divergences.
 */
const RECEIPTS = 'demo/context_bundles/releases/receipts';
let base: Tree;
let x: string;
const dirs: string[] = [];
const prepared = new Map<string, string>();

/** The arguments of one transition of v2 in `scope`. */
const transition = (to: string, scope: string) => [
  'release',
  'transition',
  'v2',
  '--to',
  to,
  '--scope',
  scope,
  '--rationale',
  `v2 to ${to} in ${scope}`,
  ...(to === 'CANARY' ? ['--canary-percent', '10'] : []),
];

/** The states v2 is brought to, in order, in the tree both branches start from. */
const STARTS: Record<string, Array<[string, string]>> = {
  'canary in eu': [
    ['SHADOW', 'eu'],
    ['CANARY', 'eu'],
  ],
  'canary in global': [
    ['SHADOW', 'global'],
    ['CANARY', 'global'],
  ],
  'shadow in eu': [['SHADOW', 'eu']],
  'shadow in global': [['SHADOW', 'global']],
};

beforeAll(() => {
  base = makeTree();
  dirs.push(base.dir);
  x = base.propose('x', {'playbook/playbook.md': 'Be helpful and precise.\n', 'routing_config/roles.json': '{}'});
  mustIn(base.knowledge, ['confirm', x, ...evalArgs()], 0, fakeEnv(base.dir));
  mustIn(base.knowledge, ['release', 'name', 'v1', base.baseline]);
  mustIn(base.knowledge, ['release', 'name', 'v2', x, '--rollback-target', 'v1']);
  for (const [name, steps] of Object.entries(STARTS)) {
    const k = path.join(tempDir('autoctx-rel-start-'), 'knowledge');
    dirs.push(path.dirname(k));
    fs.cpSync(base.knowledge, k, {recursive: true});
    for (const [to, scope] of steps) mustIn(k, transition(to, scope));
    prepared.set(name, k);
  }
}, 180_000);

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, {recursive: true, force: true});
});

interface Case {
  start: string;
  alice: (k: string) => void;
  bob: (k: string) => void;
  /** The scope whose receipts fork. */
  scope: string;
}

const reject = (k: string) => mustIn(k, ['reject', x, '--rationale', 'not good enough']);

const CASES: Record<string, Case> = {
  'Alice makes v2 ACTIVE in scope eu, Bob moves it back to SHADOW': {
    start: 'canary in eu',
    alice: (k) => mustIn(k, transition('ACTIVE', 'eu')),
    bob: (k) => mustIn(k, transition('SHADOW', 'eu')),
    scope: 'eu',
  },
  'Alice makes v2 ACTIVE globally (a promotion), Bob moves it back to SHADOW': {
    start: 'canary in global',
    alice: (k) => mustIn(k, transition('ACTIVE', 'global')),
    bob: (k) => mustIn(k, transition('SHADOW', 'global')),
    scope: 'global',
  },
  "Alice rejects v2's bundle, Bob makes v2 CANARY then ACTIVE in scope eu": {
    start: 'shadow in eu',
    alice: reject,
    bob: (k) => {
      mustIn(k, transition('CANARY', 'eu'));
      mustIn(k, transition('ACTIVE', 'eu'));
    },
    scope: 'eu',
  },
  "Alice rejects v2's bundle, Bob makes v2 CANARY globally": {
    start: 'shadow in global',
    alice: reject,
    bob: (k) => mustIn(k, transition('CANARY', 'global')),
    scope: 'global',
  },
  "Alice rejects v2's bundle, Bob makes v2 ACTIVE globally (a promotion)": {
    start: 'canary in global',
    alice: reject,
    bob: (k) => mustIn(k, transition('ACTIVE', 'global')),
    scope: 'global',
  },
};

type Resolution = 'take ours' | 'take theirs' | '-X ours' | '-X theirs' | 'rebase ours' | 'rebase theirs';
const RESOLUTIONS: Resolution[] = ['take ours', 'take theirs', '-X ours', '-X theirs', 'rebase ours', 'rebase theirs'];

/** A repository of a copy of a prepared tree; Bob works on a branch, Alice on main, each commits. */
function fork(c: Case): {repo: string; knowledge: string} {
  const repo = path.join(tempDir('autoctx-rel-git-'), 'repo');
  dirs.push(path.dirname(repo));
  const knowledge = path.join(repo, 'knowledge');
  fs.cpSync(prepared.get(c.start)!, knowledge, {recursive: true});
  initRepo(repo);
  checkout(repo, 'bob', true);
  c.bob(knowledge);
  commitAll(repo, 'bob');
  checkout(repo, 'main');
  c.alice(knowledge);
  commitAll(repo, 'alice');
  return {repo, knowledge};
}

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

/** The receipts of a scope that follow the same one: one of each side (relative to the knowledge root). */
function forkedReceipts(knowledge: string, scope: string): string[] {
  const dir = path.join(knowledge, RECEIPTS, scope);
  const read = fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .map((n) => ({n, r: JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8'))}));
  const followers = new Map<string | null, string[]>();
  for (const {n, r} of read)
    followers.set(r.previous_receipt_sha256, [...(followers.get(r.previous_receipt_sha256) ?? []), n]);
  const forks = [...followers.values()].filter((l) => l.length > 1);
  expect(forks).toHaveLength(1);
  return forks[0]!.map((n) => `${RECEIPTS}/${scope}/${n}`).sort();
}

const WAY_OUT = new RegExp(
  "two clones' histories were merged; run autoctx reconcile, which keeps one side's knowledge/ and makes the " +
    "other side's promotions",
);
type Finding = {code: string; file: string; message: string};

describe('release transitions on two branches, merged: DIVERGED (exit 8), never a tampered registry', () => {
  for (const [name, c] of Object.entries(CASES))
    for (const how of RESOLUTIONS)
      it(`${name}, joined by ${how}`, async () => {
        const {repo, knowledge} = fork(c);
        join(repo, how);
        const forked = forkedReceipts(knowledge, c.scope);
        const v = runCli(['verify', '--knowledge', knowledge, '--json']);
        expect(v.status).toBe(8);
        const errors: Finding[] = v.json.errors;
        const warnings: Finding[] = v.json.warnings;
        // Both sides' receipts, each named, with the way out.
        const diverged = errors.filter((e) => e.code === 'DIVERGED');
        expect(
          diverged
            .filter((e) => e.file.startsWith(`${RECEIPTS}/`))
            .map((e) => e.file)
            .sort(),
        ).toEqual(forked);
        for (const e of diverged) expect(e.message).toMatch(WAY_OUT);
        for (const e of diverged.filter((d) => d.file.startsWith(`${RECEIPTS}/`)))
          for (const f of forked) expect(e.message).toContain(f);
        // Never told as a hand edit, a rejected bundle serving, or a transition cut short.
        const misread = ['REJECTED_SERVING', 'RECEIPT_MISMATCH', 'REGISTRY_MISMATCH', 'MISSING_RECEIPT', 'INTEGRITY'];
        expect(errors.filter((e) => misread.includes(e.code))).toEqual([]);
        expect(warnings.filter((w) => ['REGISTRY_PENDING', 'LIFECYCLE_PENDING'].includes(w.code))).toEqual([]);

        // status lists it under diverged, and nothing as repairable.
        const before = treeHash(knowledge);
        const s = runCli(['status', '--knowledge', knowledge, '--json']);
        expect(s.status).toBe(0);
        const scenario = s.json.scenarios[0];
        expect(scenario.repairable).toEqual([]);
        expect(scenario.diverged).toEqual(expect.arrayContaining([expect.stringMatching(WAY_OUT)]));
        expect(scenario.diverged.some((m: string) => forked.every((f) => m.includes(f)))).toBe(true);
        // repair refuses before it writes anything, in one line.
        const r = runCli(['repair', '--knowledge', knowledge]);
        expect(r.status).toBe(8);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).toMatch(/DIVERGED/);
        expect(r.stderr).toMatch(WAY_OUT);
        // The next transition refuses too, in any scope, and so does a dry run, a runnable-set change and a rollback of
        // the scope.
        for (const args of [
          transition('DEPRECATED', c.scope),
          transition('SHADOW', 'us'),
          [...transition('SHADOW', 'us'), '--dry-run'],
          ['release', 'runnable', '--all', '--scope', 'us', '--rationale', 'all of them'],
          ['rollback', '--scope', 'eu', '--to', 'v1', '--rationale', 'undo', '--actor', 'alice'],
        ]) {
          const t = runCli([...args, '--knowledge', knowledge, '--json']);
          expect({args, status: t.status, code: t.json?.error?.code}).toEqual({args, status: 8, code: 'DIVERGED'});
          expect(t.json.error.message).toMatch(WAY_OUT);
        }
        expect(treeHash(knowledge)).toBe(before);
        // The way out works: reconcile keeps main's side, makes the branch's transition again through the release
        // gate, and the tree verifies with one receipt chain per scope.
        const sides = how.startsWith('rebase') ? {ours: 'main', theirs: 'ORIG_HEAD'} : {};
        const done = await reconcile({knowledge, ...sides});
        expect(done.status).toBe('reconciled');
        expect(done.scenarios[0]!.steps.some((st) => st.kind === 'transition' || st.kind === 'rejection')).toBe(true);
        expect(verify({knowledge}).errors).toEqual([]);
      }, 60_000);
});

describe('what one clone writes is told as before', () => {
  it('a transition cut short after its receipt is REGISTRY_PENDING, which repair completes', () => {
    const k = path.join(tempDir('autoctx-rel-crash-'), 'knowledge');
    dirs.push(path.dirname(k));
    fs.cpSync(prepared.get('canary in eu')!, k, {recursive: true});
    const registry = path.join(k, 'demo/context_bundles/releases/registry/eu.json');
    const bytes = fs.readFileSync(registry);
    mustIn(k, transition('ACTIVE', 'eu'));
    // The registry as it was before the transition's last write.
    fs.writeFileSync(registry, bytes);
    const v = runCli(['verify', '--knowledge', k, '--json']);
    expect(v.status).toBe(0);
    expect(v.json.warnings.map((w: Finding) => w.code)).toEqual(['REGISTRY_PENDING']);
    const s = runCli(['status', '--knowledge', k, '--json']).json.scenarios[0];
    expect(s.diverged).toEqual([]);
    expect(s.repairable).toEqual([expect.stringMatching(/scope eu: one transition behind its receipts/)]);
    expect(runCli(['repair', '--knowledge', k]).status).toBe(0);
    expect(runCli(['verify', '--knowledge', k, '--json']).json).toMatchObject({errors: [], warnings: []});
  });

  it('a registry edited by hand is REGISTRY_MISMATCH, not DIVERGED', () => {
    const k = path.join(tempDir('autoctx-rel-edit-'), 'knowledge');
    dirs.push(path.dirname(k));
    fs.cpSync(prepared.get('canary in eu')!, k, {recursive: true});
    const registry = path.join(k, 'demo/context_bundles/releases/registry/eu.json');
    const edited = JSON.parse(fs.readFileSync(registry, 'utf8'));
    edited.releases.v2.state = 'ACTIVE';
    edited.releases.v2.canary = null;
    fs.writeFileSync(registry, `${JSON.stringify(edited, null, 2)}\n`);
    const v = runCli(['verify', '--knowledge', k, '--json']);
    expect(v.status).toBe(8);
    // Named at the registry and at the receipt that wrote the registry it should be.
    expect([...new Set(v.json.errors.map((e: Finding) => e.code))]).toEqual(['REGISTRY_MISMATCH']);
    expect(runCli(['status', '--knowledge', k, '--json']).json?.scenarios?.[0]?.diverged ?? []).toEqual([]);
  });

  it("a rejection on one branch and the release's first transitions in a new scope on the other " +
    'read as one clone of an earlier autoctx left them: REJECTED_SERVING (exit 8), never exit 0', () => {
    const c: Case = {
      start: 'shadow in global',
      alice: reject,
      bob: (k) => {
        mustIn(k, transition('SHADOW', 'eu'));
        mustIn(k, transition('CANARY', 'eu'));
      },
      scope: 'eu',
    };
    const {repo, knowledge} = fork(c);
    join(repo, 'take ours');
    const v = runCli(['verify', '--knowledge', knowledge, '--json']);
    expect(v.status).toBe(8);
    expect(v.json.errors.map((e: Finding) => e.code)).toEqual(['REJECTED_SERVING']);
  }, 60_000);
});
