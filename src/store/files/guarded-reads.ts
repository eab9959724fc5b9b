import fs from 'node:fs';
import {fail} from '../../errors.js';
import type {RootGuard} from './root-guard.js';

/**
 * Files up to this size are read into one reused buffer, so that reading many files does not allocate a buffer each.
 */
const SCRATCH_LIMIT = 8 << 20;
let scratch = Buffer.allocUnsafe(1 << 16);

/** A file's bytes (in the reused buffer when `reuse` and small enough), or null when it does not exist. */
function readFile(guard: RootGuard, p: string, reuse: boolean): Buffer | null {
  if (guard.knownAbsent(p)) return null;
  guard.check(p);
  const directory = () =>
    fail('CORRUPT_FILE', `${guard.relative(p)} is a directory, expected a file`, {file: guard.relative(p)});
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
    if (reuse && st.size < SCRATCH_LIMIT)
      bytes =
        scratch.length > st.size ? scratch : (scratch = Buffer.allocUnsafe(Math.max(st.size + 1, scratch.length * 2)));
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
    if (code === 'ENOTDIR')
      fail('CORRUPT_FILE', `${guard.relative(dir)} is not a directory`, {file: guard.relative(dir)});
    throw error;
  }
}
