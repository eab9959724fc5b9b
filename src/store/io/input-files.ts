import {createHash} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {fail, isSystemError, rethrowUnless} from '../../errors.js';

/**
 * The largest input file autoctx reads (a component, a manifest, fixtures,
 * results): well above the 100 MiB components it supports, and far below
 * what would exhaust memory.
 */
export const INPUT_LIMIT_BYTES = 256 * 1024 * 1024;

function kindOf(st: fs.Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  if (st.isDirectory()) return 'a folder';
  return 'not a regular file';
}

function lstatOr(file: string, follow: boolean): fs.Stats {
  try {
    return follow ? fs.statSync(file) : fs.lstatSync(file);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    fail('INPUT_NOT_FOUND', `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, {file});
  }
}

/**
 * Why a path cannot be read as an input file, or null: it must be a regular
 * file (never a FIFO, which would block for ever, nor a device or socket),
 * within INPUT_LIMIT_BYTES, and where `follow` is false not a symbolic link.
 */
export function checkInputFile(file: string, follow: boolean): void {
  const st = lstatOr(file, follow);
  if (!st.isFile())
    fail(
      'INPUT_UNSAFE',
      `${file} is ${kindOf(st)}: ` +
        `${st.isSymbolicLink() ? 'a source is never read through a link' : 'only regular files are read'}`,
      {file},
    );
  if (st.size > INPUT_LIMIT_BYTES)
    fail(
      'INPUT_TOO_LARGE',
      `${file} is ${st.size} bytes, over the input limit of ${INPUT_LIMIT_BYTES} bytes (256 MiB)`,
      {file},
    );
}

/**
 * Read an input file's bytes safely: checked as above, opened without
 * following a final link where `follow` is false, and checked again on the
 * open descriptor (so a file swapped in between is refused too).
 */
export function readInputFile(file: string, follow: boolean): Buffer {
  checkInputFile(file, follow);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (follow ? 0 : fs.constants.O_NOFOLLOW) | fs.constants.O_NONBLOCK);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP')
      fail('INPUT_UNSAFE', `${file} is a symbolic link: a source is never read through a link`, {file});
    fail('INPUT_NOT_FOUND', `cannot read ${file}: ${code ?? 'error'}`, {file});
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) fail('INPUT_UNSAFE', `${file} is ${kindOf(st)}: only regular files are read`, {file});
    if (st.size > INPUT_LIMIT_BYTES)
      fail(
        'INPUT_TOO_LARGE',
        `${file} is ${st.size} bytes, over the input limit of ${INPUT_LIMIT_BYTES} bytes (256 MiB)`,
        {file},
      );
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Read standard input, up to INPUT_LIMIT_BYTES. */
export function readStdinLimited(): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.allocUnsafe(1 << 20);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(0, buf, 0, buf.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        if (total === 0) fail('INPUT_NOT_FOUND', 'no input on standard input');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10); // a non-blocking pipe between writes
        continue;
      }
      if (code === 'EOF') break;
      throw error;
    }
    if (n === 0) break;
    total += n;
    if (total > INPUT_LIMIT_BYTES)
      fail('INPUT_TOO_LARGE', `standard input is over the input limit of ${INPUT_LIMIT_BYTES} bytes (256 MiB)`);
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks);
}

/**
 * Why a path given on the command line cannot be an input, or null: missing
 * (its errno code), a FIFO, device or socket, or (where `follow` is false, for
 * bundle sources) a symbolic link. A folder is fine here (a source may be one).
 */
export function inputPathProblem(file: string, follow: boolean): string | null {
  let st: fs.Stats;
  try {
    st = follow ? fs.statSync(file) : fs.lstatSync(file);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return (error as NodeJS.ErrnoException).code ?? 'error';
  }
  if (st.isFile() || st.isDirectory()) return null;
  return (
    `it is ${kindOf(st)}` +
    (st.isSymbolicLink()
      ? ', and a source is never read through a link'
      : ', and only regular files and folders are read')
  );
}

/**
 * The files an evaluator command names that exist (the script after the
 * interpreter, say), each with its SHA-256, paths relative to the working
 * folder, sorted. Words are split on white space with quotes removed; a
 * word that is not an existing regular file is not a file it names. Modules
 * a script imports are not seen here: --evaluator-version covers them.
 */
export function evaluatorFiles(command: string, cwd = process.cwd()): Array<{path: string; sha256: string}> {
  const out = new Map<string, string>();
  for (const raw of command.split(/\s+/)) {
    const word = raw.replace(/^['"]|['"]$/g, '');
    if (word === '' || word.startsWith('-') || word.includes('=')) continue;
    const abs = path.resolve(cwd, word);
    let st: fs.Stats;
    try {
      st = fs.statSync(abs);
    } catch (error) {
      rethrowUnless(error, isSystemError);
      continue;
    }
    if (!st.isFile() || st.size > INPUT_LIMIT_BYTES) continue;
    const rel = path.relative(cwd, abs) || word;
    out.set(rel, createHash('sha256').update(fs.readFileSync(abs)).digest('hex'));
  }
  return [...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([p, sha256]) => ({path: p, sha256}));
}
