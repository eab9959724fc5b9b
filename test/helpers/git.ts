import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Real git on repositories in temporary folders. Every setting is local to the repository (user, no hooks, no
 * signing); the global and system configuration are never read or touched.
 */
const GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

export interface GitResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Run git in `repo`; throws unless it exits with one of `ok` (default: 0). */
export function git(repo: string, args: string[], ok: number[] = [0]): GitResult {
  const r = spawnSync('git', args, {cwd: repo, env: GIT_ENV, encoding: 'utf8'});
  if (r.error) throw r.error;
  if (!ok.includes(r.status ?? -1)) throw new Error(`git ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return {status: r.status, stdout: r.stdout, stderr: r.stderr};
}

/** Make `dir` (holding a knowledge tree) a repository on branch main with one commit of everything in it. */
export function initRepo(dir: string, user = 'Alice'): string {
  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['config', 'user.name', user]);
  git(dir, ['config', 'user.email', `${user.toLowerCase()}@example.test`]);
  git(dir, ['config', 'commit.gpgsign', 'false']);
  git(dir, ['config', 'core.autocrlf', 'false']);
  commitAll(dir, 'the knowledge tree');
  return dir;
}

/** Stage everything and commit it (an empty change commits nothing and is not an error). */
export function commitAll(repo: string, message: string): void {
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '--allow-empty', '-m', message]);
}

/** Switch to `name`, making it from the current commit when `create`. */
export function checkout(repo: string, name: string, create = false): void {
  git(repo, ['checkout', '-q', ...(create ? ['-b'] : []), name]);
}

/** The paths git left conflicted in the index. */
export function conflicts(repo: string): string[] {
  return git(repo, ['diff', '--name-only', '--diff-filter=U'])
    .stdout.split('\n')
    .filter((l) => l !== '');
}

export type Strategy = 'merge' | '-X ours' | '-X theirs';

/**
 * Merge `branch` into the current one; returns the conflicted paths (none: the merge committed itself). `-X ours` and
 * `-X theirs` resolve conflicting hunks by themselves, as git does.
 */
export function merge(repo: string, branch: string, strategy: Strategy = 'merge'): string[] {
  const x = strategy === 'merge' ? [] : ['-X', strategy.slice(3)];
  git(repo, ['merge', '-q', '--no-edit', ...x, branch], [0, 1]);
  return conflicts(repo);
}

/**
 * Resolve every conflicted path by taking one side whole, as a hurried teammate would (`git checkout --ours/--theirs`,
 * or `git rm` where that side deleted it), and commit the merge. `pick` chooses per file (default: `side`).
 */
export function resolve(repo: string, side: 'ours' | 'theirs', pick: (file: string) => 'ours' | 'theirs' = () => side) {
  for (const file of conflicts(repo)) {
    const which = pick(file);
    const has = git(repo, ['checkout', `--${which}`, '--', file], [0, 1]).status === 0;
    if (has) git(repo, ['add', '--', file]);
    else git(repo, ['rm', '-q', '--', file]);
  }
  git(repo, ['commit', '-q', '--no-edit']);
}

/**
 * Rebase the current branch onto `onto`, resolving each stopped commit by taking `side` for every conflicted file
 * (during a rebase "ours" is `onto`, "theirs" the commit being replayed).
 */
export function rebase(repo: string, onto: string, side: 'ours' | 'theirs'): void {
  let r = git(repo, ['rebase', '-q', onto], [0, 1]);
  for (let i = 0; r.status !== 0 && i < 50; i++) {
    for (const file of conflicts(repo)) {
      const has = git(repo, ['checkout', `--${side}`, '--', file], [0, 1]).status === 0;
      if (has) git(repo, ['add', '--', file]);
      else git(repo, ['rm', '-q', '--', file]);
    }
    r = spawnSyncGit(repo, ['-c', 'core.editor=true', 'rebase', '--continue']);
  }
  if (r.status !== 0) throw new Error(`rebase did not finish: ${r.stdout}${r.stderr}`);
}

function spawnSyncGit(repo: string, args: string[]): GitResult {
  return git(repo, args, [0, 1]);
}

/** Copy a folder (a prepared knowledge tree) to a new place, keeping modes. */
export function copyTree(from: string, to: string): string {
  fs.mkdirSync(path.dirname(to), {recursive: true});
  fs.cpSync(from, to, {recursive: true});
  return to;
}
