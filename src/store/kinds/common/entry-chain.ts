import {listDir, type RootGuard} from '../../files/fs.js';
import {isHistoryEntryName, LEGACY_ENTRY_NAME, type HistoryKey} from '../../layout/history-names.js';
import {DIVERGED_WAY_OUT} from '../../../model/common/divergence-advice.js';

/** One stored entry of an append-only history, with the digest its successor names it by. */
export interface Linked<T> {
  /** The file name, as listed. */
  name: string;
  key: HistoryKey;
  value: T;
  digest: string;
  previous: string | null;
}

/**
 * A history as its links make it, never as its file names number it:
 * `line`, the entries from the first one on for as long as exactly one entry
 * follows; `forks`, each set of two or more entries that follow the same one
 * (or two first entries), which is what a merge of two clones that both
 * appended leaves; `detached`, entries neither on the line nor after a fork
 * (after a lost entry); `duplicates`, an entry stored a second time under
 * its other name (a rename by repair cut short between its two writes).
 */
export interface ChainShape<T> {
  line: Linked<T>[];
  forks: Linked<T>[][];
  detached: Linked<T>[];
  duplicates: Linked<T>[];
}

/** The names of a history folder's entries (either naming), sorted; other names are left to verify. */
export function listEntryNames(guard: RootGuard, dir: string): string[] {
  return listDir(guard, dir)
    .filter((e) => e.isFile() && isHistoryEntryName(e.name))
    .map((e) => e.name)
    .sort();
}

export function shapeOf<T>(entries: Linked<T>[]): ChainShape<T> {
  if (entries.length === 1) {
    // One entry (most histories): the line when it is a first entry, else detached; nothing else to find.
    const only = entries[0]!;
    return only.previous === null
      ? {line: [only], forks: [], detached: [], duplicates: []}
      : {line: [], forks: [], detached: [only], duplicates: []};
  }
  const byDigest = new Map<string, Linked<T>>();
  const duplicates: Linked<T>[] = [];
  // A digest-named copy is the one kept; the earlier name is the duplicate an interrupted upgrade left.
  const ordered = [...entries].sort((a, b) => Number(typeof a.key === 'number') - Number(typeof b.key === 'number'));
  for (const e of ordered) {
    if (byDigest.has(e.digest)) duplicates.push(e);
    else byDigest.set(e.digest, e);
  }
  const next = new Map<string | null, Linked<T>[]>();
  for (const e of byDigest.values()) {
    const list = next.get(e.previous) ?? [];
    list.push(e);
    next.set(e.previous, list);
  }
  const forks = [...next.values()].filter((l) => l.length > 1).map((l) => l.sort((a, b) => cmp(a.name, b.name)));
  const line: Linked<T>[] = [];
  for (let at = next.get(null); at?.length === 1; at = next.get(at[0]!.digest)) line.push(at[0]!);
  const reached = new Set<Linked<T>>(line);
  // Everything after a fork belongs to one of its sides.
  const stack = forks.flat();
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (reached.has(e)) continue;
    reached.add(e);
    stack.push(...(next.get(e.digest) ?? []));
  }
  const detached = [...byDigest.values()].filter((e) => !reached.has(e)).sort((a, b) => cmp(a.name, b.name));
  return {line, forks, detached, duplicates};
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What a writer or a reader of what serves says of a forked history: a merge of two clones. */
export function forkProblem<T>(shape: ChainShape<T>, rel: (name: string) => string): string | null {
  const fork = shape.forks[0];
  if (!fork) return null;
  return `${fork.map((e) => rel(e.name)).join(' and ')} both follow the same entry (DIVERGED): ${DIVERGED_WAY_OUT}`;
}

/** What two entries that follow the same one are, and the way out: never an interrupted command. */
export function forkMessage(rels: string[], what: string, previous: string): string {
  return (
    `${rels.join(' and ')} both follow ${previous} (each side of a merge appended to ${what}, which no ` +
    `single clone writes): ${DIVERGED_WAY_OUT}`
  );
}

/** An entry stored under the name an earlier version gave it, and the name of its digest. */
export interface SeqNamed {
  from: string;
  to: string;
}

/** The entries of a history folder stored under their positions (each read, and so checked, by `read`). */
export function seqNamedEntries<T>(
  guard: RootGuard,
  dir: string,
  pathOf: (key: HistoryKey) => string,
  read: (seq: number) => T | null,
  digestOf: (value: T) => string,
): SeqNamed[] {
  return listEntryNames(guard, dir)
    .filter((name) => LEGACY_ENTRY_NAME.test(name))
    .flatMap((name) => {
      const seq = Number(name.slice(0, 6));
      const value = read(seq);
      return value === null ? [] : [{from: pathOf(seq), to: pathOf(digestOf(value))}];
    });
}
