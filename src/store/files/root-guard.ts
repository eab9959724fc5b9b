import fs from 'node:fs';
import path from 'node:path';
import {fail, isSystemError, rethrowUnless} from '../../errors.js';
import {TreeSnapshot} from './tree-snapshot.js';

/**
 * Confines every read and write to the knowledge root, resolving symlinks:
 * a path whose real location is outside the root is refused (UNSAFE_PATH).
 */
export class RootGuard {
  readonly root: string;
  readonly realRoot: string;
  private readonly realDirs = new Map<string, string>();

  constructor(root: string) {
    this.root = path.resolve(root);
    this.realRoot = fs.realpathSync(this.root);
  }

  relative(p: string): string {
    // Most paths are the root, a separator and normalized segments (the store builds them): a slice.
    const sep = path.sep;
    if (p.startsWith(this.root) && p.charAt(this.root.length) === sep && p.length > this.root.length + 1) {
      const rest = p.slice(this.root.length + 1);
      if (!rest.includes(`${sep}${sep}`) && !rest.endsWith(sep) && !`${sep}${rest}${sep}`.includes(`${sep}.`))
        return rest;
    }
    return path.relative(this.root, p) || '.';
  }

  /** The path of a file named relative to the root (as errors name them). */
  absolute(rel: string): string {
    return path.resolve(this.root, rel);
  }

  private inside(real: string): boolean {
    return real === this.realRoot || real.startsWith(this.realRoot + path.sep);
  }

  /** Real path of an existing directory, cached. */
  private realDir(dir: string): string {
    let real = this.realDirs.get(dir);
    if (real === undefined) {
      real = fs.realpathSync(dir);
      this.realDirs.set(dir, real);
    }
    return real;
  }

  private snapshot: TreeSnapshot | null = null;

  /**
   * For a read-only pass (verify): what a walk found under dir, reached
   * through real folders only (see TreeSnapshot). Reads of its files skip the
   * link checks; reads, listings and existence checks of other paths under
   * dir are answered from the walk without touching the disk.
   */
  useSnapshot(
    dir: string,
    walked: ReadonlyArray<{path: string; kind: string}>,
    listings: ReadonlyMap<string, fs.Dirent[]>,
  ): void {
    this.snapshot = new TreeSnapshot(dir, walked, listings);
  }

  /** True when the snapshot found p as a regular file reached through real folders. */
  walkedFile(p: string): boolean {
    return this.snapshot?.files.has(p) === true;
  }

  /** True when a snapshot says that p does not exist. */
  knownAbsent(p: string): boolean {
    return this.snapshot?.knownAbsent(p) === true;
  }

  /** Whether anything (a file, a folder, a link) stands at p: from the snapshot when it covers p. */
  present(p: string): boolean {
    return this.snapshot?.present(p) ?? exists(p);
  }

  /**
   * A folder's sorted listing from the snapshot: undefined when the snapshot
   * does not cover dir or a link stands there (the disk decides), [] when
   * nothing is there, 'file' when a file is.
   */
  listed(dir: string): fs.Dirent[] | 'file' | undefined {
    return this.snapshot?.listed(dir);
  }

  /** Refuse a path that is not lexically under the root or resolves outside it. */
  check(p: string): void {
    if (this.snapshot?.files.has(p)) return;
    const abs = path.resolve(p);
    if (abs !== this.root && !abs.startsWith(this.root + path.sep))
      fail('UNSAFE_PATH', `${p} is outside the knowledge root`);
    let probe = abs;
    // The nearest existing ancestor (or the path itself) must resolve inside the root.
    for (;;) {
      let st: fs.Stats | undefined;
      try {
        st = fs.lstatSync(probe);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR')
          throw error;
      }
      if (st) {
        // A plain file is where its folder is: only a symbolic link needs resolving itself.
        const real = st.isDirectory()
          ? this.realDir(probe)
          : st.isSymbolicLink()
            ? fs.realpathSync(probe)
            : path.join(this.realDir(path.dirname(probe)), path.basename(probe));
        if (!this.inside(real))
          fail('UNSAFE_PATH', `${this.relative(abs)} resolves outside the knowledge root (through a symbolic link)`, {
            file: this.relative(abs),
          });
        return;
      }
      const parent = path.dirname(probe);
      if (parent === probe) return;
      probe = parent;
    }
  }
}

/** Whether a real folder (not a link to one) stands at p. */
export function isDirectory(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return false;
  }
}

export function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return false;
  }
}
