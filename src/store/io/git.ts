import {spawnSync} from 'node:child_process';
import path from 'node:path';
import {fail} from '../../errors.js';

/** One file of a git revision under a folder: its path relative to that folder (`/`-separated) and its blob id. */
export interface RevisionFile {
  readonly rel: string;
  readonly blob: string;
}

function git(cwd: string, args: readonly string[], input?: string): string {
  const r = spawnSync('git', args, {
    cwd,
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (r.error) fail('GIT_UNAVAILABLE', `git could not be run (${r.error.message}): --extends needs git`);
  if (r.status !== 0) {
    const why = (r.stderr.trim().split('\n')[0] ?? '').replace(/^fatal: /, '');
    fail('GIT_UNAVAILABLE', `git ${args[0]} in ${cwd}: ${why || `exit ${r.status}`}`);
  }
  return r.stdout;
}

/** The commit `rev` names in the repository that holds `dir`, or a one-line refusal naming it (exit 2). */
export function resolveRevision(dir: string, rev: string): string {
  if (rev === '' || rev.startsWith('-') || /[\u0000-\u0020]/.test(rev))
    fail('USAGE', `--extends takes a git revision (a branch, tag or commit), not ${JSON.stringify(rev)}`);
  git(dir, ['rev-parse', '--show-toplevel']);
  const r = spawnSync('git', ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (r.status !== 0) fail('USAGE', `--extends: "${rev}" is not a commit of the repository that holds ${dir}`);
  return r.stdout.trim();
}

/** Every file of `commit` under `dir` (the folder's own path in that commit), links and submodules left out. */
export function revisionFiles(dir: string, commit: string): RevisionFile[] {
  const out = git(dir, ['ls-tree', '-r', '-z', commit, '--', '.']);
  const files: RevisionFile[] = [];
  for (const line of out.split('\0')) {
    if (line === '') continue;
    const tab = line.indexOf('\t');
    const [mode, type, blob] = line.slice(0, tab).split(' ');
    if (type === 'blob' && mode !== '120000') files.push({rel: line.slice(tab + 1), blob: blob!});
  }
  return files;
}

/** The blob id git gives each file's bytes as they are on disk (no filter, no end-of-line conversion). */
export function blobIds(dir: string, rels: readonly string[]): string[] {
  if (rels.length === 0) return [];
  // Whole paths: git reads --stdin-paths from the top of the work tree, not from `dir`.
  const files = rels.map((rel) => path.join(dir, rel));
  const out = git(dir, ['hash-object', '--no-filters', '--stdin-paths'], `${files.join('\n')}\n`);
  return out.trim().split('\n');
}
