import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {stableDigest} from '../../src/canonical/index.js';

/**
 * The entry files of a history folder in the order their links give (oldest first), whatever their names: each entry
 * names the digest of the one before it in `previous` (`previous_entry_sha256`, `previous_receipt_sha256`).
 */
export function chainOrder(dir: string, previous: string): string[] {
  const names = fs.readdirSync(dir).filter((n) => /^([0-9a-f]{64}|\d{6})\.json$/.test(n));
  const read = names.map((name) => {
    const value = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
    return {name, value, digest: stableDigest(value), prev: value[previous] as string | null};
  });
  const out: string[] = [];
  for (let at = read.find((e) => e.prev === null); at; at = read.find((e) => e.prev === at!.digest)) out.push(at.name);
  return out;
}

/** git in a folder, with the identity set in the repository itself (never the user's global configuration). */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0'},
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A repository holding `dir`'s files as its first commit on main. */
export function gitInit(dir: string): void {
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test');
  git(dir, 'config', 'user.email', 'test@example.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'start');
}

export function commitAll(dir: string, message: string): void {
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '--allow-empty', '-m', message);
}

/**
 * Merge `branch` into the branch checked out; every conflicted path is resolved by taking one side (`ours` or
 * `theirs`), as a hurried person would, and the merge committed. Returns the paths that conflicted.
 */
export function mergeTaking(dir: string, branch: string, side: 'ours' | 'theirs'): string[] {
  try {
    git(dir, 'merge', '-q', '--no-edit', branch);
    return [];
  } catch {
    const conflicted = git(dir, 'diff', '--name-only', '--diff-filter=U').split('\n').filter(Boolean);
    for (const file of conflicted) {
      git(dir, 'checkout', `--${side}`, '--', file);
      git(dir, 'add', '--', file);
    }
    git(dir, 'commit', '-q', '--no-edit');
    return conflicted;
  }
}
