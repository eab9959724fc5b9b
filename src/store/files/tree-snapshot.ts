import type fs from 'node:fs';
import path from 'node:path';

/**
 * Verify's snapshot cache: what one walk found under a folder, reached
 * through real folders only: its regular files, every entry, and each
 * folder's sorted listing. A read-only pass answers from it what it covers,
 * without touching the disk.
 */
export class TreeSnapshot {
  readonly dir: string;
  readonly prefix: string;
  readonly files = new Set<string>();
  readonly entries = new Set<string>();

  constructor(
    dir: string,
    walked: ReadonlyArray<{path: string; kind: string}>,
    readonly listings: ReadonlyMap<string, fs.Dirent[]>,
  ) {
    this.dir = path.resolve(dir);
    this.prefix = this.dir + path.sep;
    for (const e of walked) {
      this.entries.add(e.path);
      if (e.kind === 'file') this.files.add(e.path);
    }
  }

  /** True when the snapshot covers p and says that it does not exist. */
  knownAbsent(p: string): boolean {
    return p.startsWith(this.prefix) && !this.files.has(p);
  }

  /** Whether anything stands at p, or undefined when the snapshot does not cover p. */
  present(p: string): boolean | undefined {
    return p.startsWith(this.prefix) ? this.entries.has(p) : undefined;
  }

  /**
   * A folder's sorted listing: undefined when not covered or a link stands there, [] when nothing is there, 'file' when
   * a file is.
   */
  listed(dir: string): fs.Dirent[] | 'file' | undefined {
    if (dir !== this.dir && !dir.startsWith(this.prefix)) return undefined;
    const listing = this.listings.get(dir);
    if (listing !== undefined) return listing;
    if (this.files.has(dir)) return 'file';
    return this.entries.has(dir) ? undefined : [];
  }
}
