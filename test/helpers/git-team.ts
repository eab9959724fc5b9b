import fs from 'node:fs';
import path from 'node:path';
import {init} from '../../src/core/common/init.js';
import {propose} from '../../src/core/promotion/propose.js';
import {evaluateCandidate} from '../../src/core/evaluation/evaluate.js';
import {promote} from '../../src/core/promotion/promote.js';
import {reject} from '../../src/core/promotion/reject.js';
import {rollback} from '../../src/core/rollback/rollback.js';
import {rolloverEpoch} from '../../src/core/rollback/epoch.js';
import {runCli} from './cli.js';
import {FAKE, FIXTURES_12, POLICY_SMALL} from './pipeline.js';
import {tempDir, writeSource} from './tree.js';
import {checkout, commitAll, copyTree, git, initRepo, merge, rebase, resolve, type Strategy} from './git.js';
import {expect} from '@jest/globals';
import type {ReconcileResult} from '../../src/core/common/reconcile/reconcile.js';

/**
 * A team of two with real git: prepared knowledge trees (a scenario with sibling candidates, and one with a promotion
 * made), Alice on main and Bob on a branch each running one ordinary command, and the naive ways of joining them.
 */
const ROLES = {'routing_config/roles.json': '{"model_competitor": "small"}'};
let seq = 0;

export async function proposeFiles(knowledge: string, text: string): Promise<string> {
  const src = writeSource(path.join(path.dirname(knowledge), `src-${seq++}`), {'playbook/playbook.md': text, ...ROLES});
  const r = await propose({knowledge, scenario: 'demo', from: src, runId: `run-${seq}`});
  fs.rmSync(src, {recursive: true});
  return r.bundle_digest;
}

export async function confirm(knowledge: string, candidate: string): Promise<void> {
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
export async function confirmedCandidate(knowledge: string, text: string): Promise<string> {
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
export interface Bases {
  /** P serving, X and Y confirmed (both children of P). */
  siblings: string;
  /** X promoted from P; Z confirmed (a child of X). */
  promoted: string;
}
export const ids = {P: '', X: '', Y: '', Z: ''};
export let bases: Bases;

/** Make the prepared trees (once per suite, in its beforeAll). */
export async function makeBases(): Promise<void> {
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
}

/** A repository holding a copy of a base tree, committed on main. */
export function repoOf(base: string): {repo: string; knowledge: string} {
  const repo = copyTree(base, path.join(tempDir('autoctx-git-'), 'repo'));
  initRepo(repo);
  return {repo, knowledge: path.join(repo, 'knowledge')};
}

/** Alice works on main, Bob on a branch made from it; each commits what they did. */
export async function fork(
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

export type Resolution = 'take ours' | 'take theirs' | '-X ours' | '-X theirs' | 'rebase ours' | 'rebase theirs';
export const RESOLUTIONS: Resolution[] = [
  'take ours',
  'take theirs',
  '-X ours',
  '-X theirs',
  'rebase ours',
  'rebase theirs',
];

/** Bring Bob's branch into main the naive way named. */
export function join(repo: string, how: Resolution): void {
  if (how.startsWith('rebase')) {
    checkout(repo, 'bob');
    rebase(repo, 'main', how === 'rebase ours' ? 'ours' : 'theirs');
    return;
  }
  const strategy: Strategy = how.startsWith('-X') ? (how as Strategy) : 'merge';
  const left = merge(repo, 'bob', strategy);
  if (left.length > 0) resolve(repo, how === 'take theirs' ? 'theirs' : 'ours');
}

export function verifyCli(knowledge: string) {
  return runCli(['verify', '--knowledge', knowledge, '--json']);
}

export const codes = (r: ReturnType<typeof verifyCli>) => ({
  status: r.status,
  errors: (r.json?.errors ?? []).map((e: {code: string; message: string}) => `${e.code}: ${e.message}`),
  warnings: (r.json?.warnings ?? []).map((e: {code: string; message: string}) => `${e.code}: ${e.message}`),
});

export const SCENARIOS: Record<string, () => Promise<{repo: string; knowledge: string}>> = {
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

export const SCENARIO_DIR = (knowledge: string) => path.join(knowledge, 'demo');
export const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** What serves, and every bundle the tree says was rejected (a rejected record or a negative result). */
export function serving(knowledge: string): string {
  return readJson(path.join(SCENARIO_DIR(knowledge), 'context_bundles/active.json')).bundle_digest;
}
export function rejected(knowledge: string): string[] {
  const dir = path.join(SCENARIO_DIR(knowledge), 'context_bundles/candidates');
  return fs.readdirSync(dir).filter((d) => {
    const record = readJson(path.join(dir, d, 'record.json'));
    return record.lifecycle === 'rejected' || fs.existsSync(path.join(dir, d, 'negative_result.json'));
  });
}

/** The other side's state-change files (promotions, rollbacks, rollovers, negative results) at its commit. */
export const STATE_CHANGE = /\/(promotions|rollbacks|rollovers)\/[^/]+\.json$|negative_result\.json$/;
export function stateChanges(repo: string, commit: string, since: string, kinds: RegExp): string[] {
  const out = git(repo, ['diff', '--name-only', '--diff-filter=A', since, commit, '--', 'knowledge/demo']).stdout;
  return out
    .split('\n')
    .filter((f) => kinds.test(f))
    .map((f) => f.replace(/^knowledge\/demo\//, ''));
}

/** Every state change the other side recorded is either in the tree as it was, or a step of the reconcile record. */
export function nothingLost(repo: string, knowledge: string, r: ReconcileResult, kinds = STATE_CHANGE): void {
  const changes = stateChanges(repo, r.other.commit, r.base, kinds);
  expect(changes.length).toBeGreaterThan(0);
  const steps = r.scenarios.flatMap((s) => s.steps);
  for (const file of changes) {
    const kept = fs.existsSync(path.join(SCENARIO_DIR(knowledge), file));
    const told = steps.some((s) => s.source.some((src) => src.path === file));
    expect({file, kept: kept || told}).toEqual({file, kept: true});
  }
  const record = r.scenarios[0]!.record!;
  expect(readJson(path.join(knowledge, record)).steps).toEqual(steps);
}
