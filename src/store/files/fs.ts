import fs from 'node:fs';
import path from 'node:path';
import {randomBytes} from 'node:crypto';
import {utf8Piece} from '../../canonical/index.js';
import {fail, isSystemError, rethrowUnless} from '../../errors.js';
import {tempPath} from '../paths.js';

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
      if (!rest.includes(`${sep}${sep}`) && !rest.endsWith(sep) && !`${sep}${rest}${sep}`.includes(`${sep}.`)) return rest;
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

  private snapshot: {dir: string; prefix: string; files: Set<string>; entries: Set<string>; listings: ReadonlyMap<string, fs.Dirent[]>} | null = null;

  /**
   * For a read-only pass (verify): what a walk found under dir, reached
   * through real folders only: its regular files, every entry, and each
   * folder's sorted listing. Reads of those files skip the link checks;
   * reads, listings and existence checks of other paths under dir are
   * answered from the walk without touching the disk.
   */
  useSnapshot(dir: string, walked: readonly TreeEntry[], listings: ReadonlyMap<string, fs.Dirent[]>): void {
    const abs = path.resolve(dir);
    const files = new Set<string>();
    const entries = new Set<string>();
    for (const e of walked) {
      entries.add(e.path);
      if (e.kind === 'file') files.add(e.path);
    }
    this.snapshot = {dir: abs, prefix: abs + path.sep, files, entries, listings};
  }

  /** True when the snapshot found p as a regular file reached through real folders. */
  walkedFile(p: string): boolean {
    return this.snapshot?.files.has(p) === true;
  }

  /** True when a snapshot says that p does not exist. */
  knownAbsent(p: string): boolean {
    const s = this.snapshot;
    return s !== null && p.startsWith(s.prefix) && !s.files.has(p);
  }

  /** Whether anything (a file, a folder, a link) stands at p: from the snapshot when it covers p. */
  present(p: string): boolean {
    const s = this.snapshot;
    if (s !== null && p.startsWith(s.prefix)) return s.entries.has(p);
    return exists(p);
  }

  /**
   * A folder's sorted listing from the snapshot: undefined when the snapshot
   * does not cover dir or a link stands there (the disk decides), [] when
   * nothing is there, 'file' when a file is.
   */
  listed(dir: string): fs.Dirent[] | 'file' | undefined {
    const s = this.snapshot;
    if (s === null || (dir !== s.dir && !dir.startsWith(s.prefix))) return undefined;
    const listing = s.listings.get(dir);
    if (listing !== undefined) return listing;
    if (s.files.has(dir)) return 'file';
    return s.entries.has(dir) ? undefined : [];
  }

  /** Refuse a path that is not lexically under the root or resolves outside it. */
  check(p: string): void {
    if (this.snapshot?.files.has(p)) return;
    const abs = path.resolve(p);
    if (abs !== this.root && !abs.startsWith(this.root + path.sep)) fail('UNSAFE_PATH', `${p} is outside the knowledge root`);
    let probe = abs;
    // The nearest existing ancestor (or the path itself) must resolve inside the root.
    for (;;) {
      let st: fs.Stats | undefined;
      try {
        st = fs.lstatSync(probe);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error;
      }
      if (st) {
        // A plain file is where its folder is: only a symbolic link needs resolving itself.
        const real = st.isDirectory() ? this.realDir(probe) : st.isSymbolicLink() ? fs.realpathSync(probe) : path.join(this.realDir(path.dirname(probe)), path.basename(probe));
        if (!this.inside(real)) fail('UNSAFE_PATH', `${this.relative(abs)} resolves outside the knowledge root (through a symbolic link)`, {file: this.relative(abs)});
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

/** Files up to this size are read into one reused buffer, so that reading many files does not allocate a buffer each. */
const SCRATCH_LIMIT = 8 << 20;
let scratch = Buffer.allocUnsafe(1 << 16);

/** A file's bytes (in the reused buffer when `reuse` and small enough), or null when it does not exist. */
function readFile(guard: RootGuard, p: string, reuse: boolean): Buffer | null {
  if (guard.knownAbsent(p)) return null;
  guard.check(p);
  const directory = () => fail('CORRUPT_FILE', `${guard.relative(p)} is a directory, expected a file`, {file: guard.relative(p)});
  let fd: number;
  try {
    fd = fs.openSync(p, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'EISDIR') directory();
    throw error;
  }
  let bytes: Buffer;
  let length = 0;
  try {
    const st = fs.fstatSync(fd);
    if (st.isDirectory()) directory();
    const regular = st.isFile();
    if (reuse && st.size < SCRATCH_LIMIT) bytes = scratch.length > st.size ? scratch : (scratch = Buffer.allocUnsafe(Math.max(st.size + 1, scratch.length * 2)));
    else bytes = Buffer.allocUnsafe(st.size + 1); // one byte more, to see the end without a second buffer
    for (;;) {
      if (length === bytes.length) {
        const grown = Buffer.allocUnsafe(bytes.length * 2); // the file grew while it was read
        bytes.copy(grown, 0, 0, length);
        bytes = grown;
      }
      const wanted = bytes.length - length;
      const n = fs.readSync(fd, bytes, length, wanted, null);
      length += n;
      // A regular file that gave all its size and less than asked is at its end: no second read to find it.
      if (n === 0 || (regular && n < wanted && length >= st.size)) break;
    }
  } finally {
    fs.closeSync(fd);
  }
  return bytes.subarray(0, length);
}

/** Read a file's bytes, or null when it does not exist. */
export function readBytes(guard: RootGuard, p: string): Buffer | null {
  return readFile(guard, p, false);
}

/**
 * Read a file and hand its bytes to `use` before returning; the bytes may be
 * reused afterwards and must not be kept. Null when the file does not exist.
 */
export function withBytes<T>(guard: RootGuard, p: string, use: (bytes: Uint8Array) => T): T | null {
  const bytes = readFile(guard, p, true);
  return bytes === null ? null : use(bytes);
}

/** Entries of a directory, sorted; empty when it does not exist. */
export function listDir(guard: RootGuard, dir: string): fs.Dirent[] {
  const listed = guard.listed(dir);
  if (listed === 'file') fail('CORRUPT_FILE', `${guard.relative(dir)} is not a directory`, {file: guard.relative(dir)});
  if (listed !== undefined) return listed;
  guard.check(dir);
  try {
    return fs.readdirSync(dir, {withFileTypes: true}).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    if (code === 'ENOTDIR') fail('CORRUPT_FILE', `${guard.relative(dir)} is not a directory`, {file: guard.relative(dir)});
    throw error;
  }
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (error) {
    // Some platforms cannot open or fsync a directory; durability there is best effort.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EACCES') throw error;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * mkdir -p, one level at a time, so that a refusal names its real cause (a
 * recursive mkdir reports ENOENT where the file system is read-only). Returns
 * the first folder it created, as fs.mkdirSync's recursive form does.
 */
export function mkdirs(dir: string, mode?: number): string | undefined {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !exists(d); d = path.dirname(d)) {
    missing.push(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d, mode !== undefined ? {mode} : {});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return missing[0];
}

/** mkdir -p that fsyncs the parent of every directory it creates. */
export function mkdirDurable(guard: RootGuard, dir: string, mode?: number): void {
  guard.check(dir);
  const first = mkdirs(dir, mode);
  if (first === undefined) return;
  let d = dir;
  const created: string[] = [];
  while (d.length >= first.length) {
    created.push(d);
    d = path.dirname(d);
  }
  for (const c of created.reverse()) fsyncDir(path.dirname(c));
}

/**
 * Crash injection, a testing aid (docs/guarantees.md): AUTOCTX_FAULT=<n>:before
 * kills the process with SIGKILL right before the n-th durable write of the
 * process is published (after its data is flushed), <n>:after right after it
 * (and its folder) are durable. AUTOCTX_FAULT_TRACE=<file> appends one line per
 * fault point reached, so a test can enumerate them.
 */
let durableWrites = 0;
function faultPoint(phase: 'before' | 'after', target: string): void {
  const fault = process.env.AUTOCTX_FAULT;
  const trace = process.env.AUTOCTX_FAULT_TRACE;
  if (!fault && !trace) return;
  if (phase === 'before') durableWrites++;
  const point = `${durableWrites}:${phase}`;
  if (trace) fs.appendFileSync(trace, `${point} ${path.basename(target)}\n`);
  if (fault === point) process.kill(process.pid, 'SIGKILL');
}

function nonce(): string {
  return randomBytes(6).toString('hex');
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done);
}

/**
 * Append text to an open file and flush it (fdatasync) before returning: one
 * durable write, with the fault points of any other (before: nothing
 * appended; after: appended and flushed).
 */
export function appendDurable(fd: number, target: string, text: string): void {
  faultPoint('before', target);
  try {
    writeAll(fd, Buffer.from(text, 'utf8'));
    fs.fdatasyncSync(fd);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e && typeof e === 'object' && e.path === undefined) e.path = target;
    throw error;
  }
  faultPoint('after', target);
}

/** What a write takes: text, bytes, or a function that yields the text in pieces (for very large documents). */
export type WriteData = string | Uint8Array | (() => Iterable<string>);

/** Write bytes to a fresh temp file beside the target and fsync it; returns the temp file's path. */
export function writeTemp(target: string, data: WriteData, mode = 0o644): string {
  const tmp = tempPath(target, nonce());
  const fd = fs.openSync(tmp, 'wx', mode);
  try {
    if (mode !== 0o644) fs.fchmodSync(fd, mode); // exactly this mode, whatever the umask
    if (typeof data === 'function') for (const piece of data()) writeAll(fd, utf8Piece(piece));
    else fs.writeFileSync(fd, data);
    // fdatasync: the data and the size, which is all a fresh file needs before its rename.
    fs.fdatasyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(tmp, {force: true});
    const e = error as NodeJS.ErrnoException;
    if (e && typeof e === 'object' && e.path === undefined) e.path = target; // write(2) and fsync(2) errors name no file
    throw error;
  }
  fs.closeSync(fd);
  return tmp;
}

export interface WriteOptions {
  /** Called synchronously right before the rename or link that publishes the file. */
  beforePublish?: () => void;
  /**
   * Skip the directory fsync after the rename: only for files whose loss in a
   * crash is repaired from other durable files (a candidate record lagging its
   * evidence). The file's own data is still flushed before the rename.
   */
  lazyDirectory?: boolean;
  /** The new file's mode (default 0644); the state area's files are 0600. */
  mode?: number;
  /** The mode of folders this write creates (default per umask); the state area's are 0700. */
  dirMode?: number;
}

/** temp → write → fsync → rename → fsync(dir). Readers see the old or the new file, whole. */
export function atomicWrite(guard: RootGuard, target: string, data: WriteData, options: WriteOptions = {}): void {
  const dir = path.dirname(target);
  mkdirDurable(guard, dir, options.dirMode);
  guard.check(target);
  const tmp = writeTemp(target, data, options.mode);
  try {
    options.beforePublish?.();
    faultPoint('before', target);
    fs.renameSync(tmp, target);
  } catch (error) {
    fs.rmSync(tmp, {force: true});
    throw error;
  }
  if (!options.lazyDirectory) fsyncDir(dir);
  faultPoint('after', target);
}

/**
 * Create a file that must never change. If it exists, `same(existing)` decides:
 * equal → no-op (returns false), different → IMMUTABLE_CONFLICT. Publishing uses
 * link(2), which never replaces an existing file, so a racing writer cannot be
 * overwritten either. Returns true when the file was created.
 */
export function createImmutable(
  guard: RootGuard,
  target: string,
  data: WriteData,
  same: (existing: Buffer) => boolean,
  options: WriteOptions = {},
): boolean {
  const existing = readBytes(guard, target);
  if (existing !== null) {
    if (same(existing)) return false;
    fail('IMMUTABLE_CONFLICT', `${guard.relative(target)} already exists with different content; immutable files are never overwritten`, {file: guard.relative(target)});
  }
  const dir = path.dirname(target);
  mkdirDurable(guard, dir, options.dirMode);
  const tmp = writeTemp(target, data, options.mode);
  try {
    options.beforePublish?.();
    faultPoint('before', target);
    fs.linkSync(tmp, target);
  } catch (error) {
    fs.rmSync(tmp, {force: true});
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return createImmutable(guard, target, data, same, options);
    throw error;
  }
  fs.rmSync(tmp, {force: true});
  fsyncDir(dir);
  faultPoint('after', target);
  return true;
}

export function removeFile(guard: RootGuard, target: string, options: WriteOptions = {}): void {
  guard.check(target);
  options.beforePublish?.();
  faultPoint('before', target);
  fs.rmSync(target, {force: true, recursive: true});
  fsyncDir(path.dirname(target));
  faultPoint('after', target);
}

export interface TreeEntry {
  path: string;
  kind: 'file' | 'dir' | 'symlink' | 'other';
}

/** Every entry below dir (not following links), depth first, sorted; `listings` receives each folder's sorted entries. */
export function walkTree(guard: RootGuard, dir: string, listings?: Map<string, fs.Dirent[]>): TreeEntry[] {
  guard.check(dir);
  const out: TreeEntry[] = [];
  const visit = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, {withFileTypes: true});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    listings?.set(d, entries);
    for (const e of entries) {
      const p = `${d}${path.sep}${e.name}`;
      if (e.isSymbolicLink()) out.push({path: p, kind: 'symlink'});
      else if (e.isDirectory()) {
        out.push({path: p, kind: 'dir'});
        visit(p);
      } else if (e.isFile()) out.push({path: p, kind: 'file'});
      else out.push({path: p, kind: 'other'});
    }
  };
  visit(dir);
  return out;
}
