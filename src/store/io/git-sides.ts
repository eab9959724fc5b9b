import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {fail} from '../../errors.js';

/**
 * The two sides of a merge and their last common commit, as `autoctx reconcile` reads them from the repository that
 * holds the knowledge root: during a merge (conflicts still in the index) HEAD and MERGE_HEAD; after a merge was
 * committed, the merge commit's two parents; given by the user otherwise (a rebase: `--ours`, `--theirs`).
 */
export interface MergeSides {
  /** The work tree's top folder. */
  readonly top: string;
  /** The knowledge root's path inside the repository (`/`-separated, '' at the top). */
  readonly prefix: string;
  readonly ours: string;
  readonly theirs: string;
  readonly base: string;
  /** True while git is in the middle of the merge (MERGE_HEAD exists). */
  readonly merging: boolean;
}

function run(cwd: string, args: readonly string[], what: string): string {
  const r = spawnSync('git', args, {cwd, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe']});
  if (r.error) fail('GIT_UNAVAILABLE', `git could not be run (${r.error.message}): ${what} needs git`);
  if (r.status !== 0) {
    const why = (r.stderr.trim().split('\n')[0] ?? '').replace(/^fatal: /, '');
    fail('GIT_UNAVAILABLE', `git ${args[0]} in ${cwd}: ${why || `exit ${r.status}`}`);
  }
  return r.stdout;
}

function commitOf(cwd: string, rev: string): string | null {
  const r = spawnSync('git', ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], {
    cwd,
    encoding: 'utf8',
  });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** git's merge base of two commits, or '' when they have none (unrelated histories, a shallow clone). */
function mergeBase(cwd: string, a: string, b: string): string {
  const r = spawnSync('git', ['merge-base', a, b], {cwd, encoding: 'utf8'});
  if (r.error) fail('GIT_UNAVAILABLE', `git could not be run (${r.error.message}): reconcile needs git`);
  return r.status === 0 ? (r.stdout.trim().split('\n')[0] ?? '') : '';
}

/** A revision the user gave, as a commit, or a one-line refusal naming the flag (exit 2). */
function givenCommit(cwd: string, flag: string, rev: string): string {
  if (rev === '' || rev.startsWith('-') || /[\u0000-\u0020]/.test(rev))
    fail('USAGE', `${flag} takes a git revision (a branch, tag or commit), not ${JSON.stringify(rev)}`);
  const c = commitOf(cwd, rev);
  if (c === null) fail('USAGE', `${flag}: "${rev}" is not a commit of the repository that holds ${cwd}`);
  return c;
}

export interface SideRevisions {
  base?: string | undefined;
  ours?: string | undefined;
  theirs?: string | undefined;
}

/** Find the two sides of the merge the knowledge root `dir` is in, and their base. */
export function mergeSides(dir: string, given: SideRevisions = {}): MergeSides {
  const what = 'reconcile';
  const top = run(dir, ['rev-parse', '--show-toplevel'], what).trim();
  const prefix = run(dir, ['rev-parse', '--show-prefix'], what).trim().replace(/\/$/, '');
  const givenBase = given.base !== undefined ? givenCommit(dir, '--base', given.base) : null;
  const mergeHead = commitOf(dir, 'MERGE_HEAD');
  let ours: string | null;
  let theirs: string | null;
  if (given.ours !== undefined || given.theirs !== undefined) {
    if (given.ours === undefined || given.theirs === undefined)
      fail('USAGE', '--ours and --theirs go together (the two sides of a rebase: its upstream and ORIG_HEAD)');
    ours = givenCommit(dir, '--ours', given.ours);
    theirs = givenCommit(dir, '--theirs', given.theirs);
  } else if (mergeHead !== null) {
    ours = commitOf(dir, 'HEAD');
    theirs = mergeHead;
  } else {
    ours = commitOf(dir, 'HEAD^1');
    theirs = commitOf(dir, 'HEAD^2');
    if (ours === null || theirs === null)
      fail(
        'NOT_A_MERGE',
        'no merge to reconcile: git is not merging and HEAD is not a merge commit ' +
          '(after a rebase, name its two sides: --ours <upstream> --theirs ORIG_HEAD)',
      );
  }
  if (ours === null) fail('NOT_A_MERGE', 'no merge to reconcile: the repository has no commit yet');
  const base = givenBase ?? mergeBase(dir, ours, theirs);
  if (!/^[0-9a-f]{40,64}$/.test(base))
    fail('NOT_A_MERGE', 'the two sides have no common commit: give the commit they started from with --base');
  return {top, prefix, ours, theirs, base, merging: mergeHead !== null};
}

/**
 * Write every file `commit` holds under `prefix` into `dest` (as git stores it: no end-of-line conversion), links and
 * submodules left out. `dest` is a fresh folder outside the knowledge root.
 */
export function extractTree(top: string, prefix: string, commit: string, dest: string): number {
  const listing = run(top, ['ls-tree', '-r', '-z', commit, '--', prefix === '' ? '.' : prefix], 'reconcile');
  const files: {rel: string; blob: string; mode: string}[] = [];
  for (const line of listing.split('\0')) {
    if (line === '') continue;
    const tab = line.indexOf('\t');
    const [mode, type, blob] = line.slice(0, tab).split(' ');
    const full = line.slice(tab + 1);
    const rel = prefix === '' ? full : full.slice(prefix.length + 1);
    if (type !== 'blob' || mode === '120000' || rel === '') continue;
    // A commit's names become paths here: nothing that could leave the folder, or that is not a plain relative path.
    if (rel.split('/').some((seg) => seg === '' || seg === '.' || seg === '..') || /[\\\u0000]/.test(rel))
      fail('UNSAFE_PATH', `commit ${commit.slice(0, 12)} holds a path reconcile refuses: ${JSON.stringify(full)}`);
    files.push({rel, blob: blob!, mode: mode!});
  }
  fs.mkdirSync(dest, {recursive: true});
  if (files.length === 0) return 0;
  const r = spawnSync('git', ['cat-file', '--batch'], {
    cwd: top,
    input: `${files.map((f) => f.blob).join('\n')}\n`,
    maxBuffer: 2 ** 31,
  });
  if (r.error || r.status !== 0) fail('GIT_UNAVAILABLE', `git cat-file could not read ${commit}`);
  const out = r.stdout;
  let at = 0;
  for (const f of files) {
    const nl = out.indexOf(0x0a, at);
    const [sha, type, sizeText] = out.subarray(at, nl).toString('latin1').split(' ');
    const size = Number(sizeText);
    if (sha !== f.blob || type !== 'blob' || !Number.isSafeInteger(size))
      fail(
        'GIT_UNAVAILABLE',
        `git cat-file could not read ${f.rel} of ` + `${commit.slice(0, 12)} (is the clone complete?)`,
      );
    const body = out.subarray(nl + 1, nl + 1 + size);
    at = nl + 1 + size + 1;
    const target = path.join(dest, ...f.rel.split('/'));
    fs.mkdirSync(path.dirname(target), {recursive: true});
    fs.writeFileSync(target, body, {mode: f.mode === '100755' ? 0o755 : 0o644});
  }
  return files.length;
}

/** Every file git tracks under the knowledge root (its index: a merge's result and conflicts), relative to it. */
export function trackedFiles(sides: MergeSides): string[] {
  const out = run(sides.top, ['ls-files', '-z', '--', sides.prefix === '' ? '.' : sides.prefix], 'reconcile');
  return out
    .split('\0')
    .filter((f) => f !== '')
    .map((f) => (sides.prefix === '' ? f : f.slice(sides.prefix.length + 1)));
}

/**
 * Outside a merge, reconcile replaces a committed merge's result: changes to the knowledge tree that are not committed
 * (a local promotion, a file of one's own) would be replaced or left half-joined, so they are refused first.
 */
export function refuseUncommitted(sides: MergeSides): void {
  const pathspec = sides.prefix === '' ? '.' : sides.prefix;
  const out = run(sides.top, ['status', '--porcelain', '-z', '--untracked-files=all', '--', pathspec], 'reconcile');
  const first = out.split('\0').find((l) => l !== '');
  if (first)
    fail(
      'USAGE',
      `the knowledge tree has changes that are not committed (${first.slice(3)}): commit or stash them, ` +
        'then run autoctx reconcile again',
    );
}

/** The short name of a commit for messages (its first 12 hex digits). */
export function shortCommit(commit: string): string {
  return commit.slice(0, 12);
}
