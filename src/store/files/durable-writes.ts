import fs from 'node:fs';
import path from 'node:path';
import {randomBytes} from 'node:crypto';
import {utf8Piece} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {tempPath} from '../paths.js';
import {faultPoint} from './fault-injection.js';
import {readBytes} from './guarded-reads.js';
import {exists, type RootGuard} from './root-guard.js';

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
    // write(2) and fsync(2) errors name no file
    if (e && typeof e === 'object' && e.path === undefined) e.path = target;
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
    fail(
      'IMMUTABLE_CONFLICT',
      `${guard.relative(target)} already exists with different content; immutable files are never overwritten`,
      {file: guard.relative(target)},
    );
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
