import {readBytes, type RootGuard} from '../../files/fs.js';
import type {LockedWriter} from '../../files/locked-writer.js';
import {RootPaths} from '../../paths.js';

/**
 * The root's .gitignore, a root-level document: the rules that keep lock,
 * temporary and per-machine files out of git, by the generation that added
 * them. A tree made by an older autoctx lacks the later generations' rules:
 * that is a warning, which any writing command or repair brings up to date.
 * A missing first-generation rule was removed by hand: an error.
 */
export const GITIGNORE_COMMENT = '# autoctx: lock and temporary files are never committed';
export const GITIGNORE_GENERATIONS: readonly (readonly string[])[] = [
  ['*.tmp', 'autoctx.lock/', 'autoctx.lock.stale-*/', '.lock', '.false-promotion.lock'],
  ['.state/'],
  // Locks are files (published whole with link(2)); the first rules matched folders only.
  ['autoctx.lock', 'autoctx.lock.stale-*'],
];
export const GITIGNORE_LINES: readonly string[] = [GITIGNORE_COMMENT, ...GITIGNORE_GENERATIONS.flat()];

export interface GitignoreState {
  file: string;
  /** First-generation rules that are missing (removed by hand). */
  removed: string[];
  /** Rules of later generations that are missing (an older tree). */
  outdated: string[];
}

/** What the root's .gitignore lacks, or null when there is none. */
export function readGitignore(guard: RootGuard): GitignoreState | null {
  const file = new RootPaths(guard.root).gitignore;
  const current = readBytes(guard, file)?.toString('utf8');
  if (current === undefined) return null;
  const have = new Set(current.split(/\r?\n/));
  const [first, ...later] = GITIGNORE_GENERATIONS;
  return {file, removed: first!.filter((l) => !have.has(l)), outdated: later.flat().filter((l) => !have.has(l))};
}

/**
 * Append the rules the root's .gitignore lacks (creating it when `create`),
 * under the state area's lock, which guards root-level documents. Lines a
 * person added stay as they are. Returns the rules added.
 */
export function updateGitignore(writer: LockedWriter, options: {create: boolean}): string[] {
  const paths = new RootPaths(writer.guard.root);
  const current = readBytes(writer.guard, paths.gitignore)?.toString('utf8');
  if (current === undefined && !options.create) return [];
  const text = current ?? '';
  const have = new Set(text.split(/\r?\n/));
  const missing = GITIGNORE_LINES.filter((l) => !have.has(l));
  if (missing.length === 0) return [];
  const prefix = text === '' || text.endsWith('\n') ? text : `${text}\n`;
  writer.replace(paths.gitignore, `${prefix}${missing.join('\n')}\n`, {mode: 0o644});
  return missing.filter((l) => l !== GITIGNORE_COMMENT);
}
