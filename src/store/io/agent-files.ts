/**
 * The agent evaluator's files: task trees and their digest, the prepared-fixture cache in the state area, each
 * arm's scratch folder, what changed in a workspace, and content-addressed artifacts. No knowledge-tree document
 * lives here: the cache and the artifacts are the evaluator's own, under .state (never committed).
 */
import {createHash, randomBytes} from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fail, isSystemError, rethrowUnless} from '../../errors.js';

/** One regular file of a task tree: its path (POSIX separators), whether it is executable, its SHA-256. */
export interface TreeFile {
  path: string;
  executable: boolean;
  sha256: string;
  /** Of a copy just written: what its inode said then (a later change moves its ctime, so it is read again). */
  stamp?: string;
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * The tree digest (docs/agent-evaluator.md): the SHA-256 of one line per regular file, in the byte order of the
 * files' UTF-8 paths, `<sha256 of its bytes> <x if executable by its owner, else -> <path>\n`. Folders count only
 * through the files in them; a tree holding anything but regular files and folders has no digest.
 */
export function digestOfFiles(files: readonly TreeFile[]): string {
  const sorted = [...files].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const h = createHash('sha256');
  for (const f of sorted) h.update(`${f.sha256} ${f.executable ? 'x' : '-'} ${f.path}\n`);
  return h.digest('hex');
}

/** The tree digest of text files given by path (the `files` of a task): none executable. */
export function digestOfTexts(files: Readonly<Record<string, string>>): string {
  return digestOfFiles(Object.entries(files).map(([p, text]) => ({path: p, executable: false, sha256: sha256(text)})));
}

/**
 * Every regular file under dir (links never followed), with `skip` (top-level names) left out. A link, FIFO, device
 * or socket in the tree is INVALID_INPUT naming it: a task tree holds files and folders only.
 */
export function treeFiles(dir: string, skip: readonly string[] = []): TreeFile[] {
  const out: TreeFile[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of fs.readdirSync(d, {withFileTypes: true})) {
      if (rel === '' && skip.includes(e.name)) continue;
      const p = path.join(d, e.name);
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p, r);
      else if (e.isFile())
        out.push({path: r, executable: (fs.statSync(p).mode & 0o100) !== 0, sha256: sha256(fs.readFileSync(p))});
      else fail('INVALID_INPUT', `${p} is not a regular file or a folder: a task tree holds only those`, {file: p});
    }
  };
  walk(dir, '');
  return out;
}

export function treeDigest(dir: string, skip: readonly string[] = []): string {
  return digestOfFiles(treeFiles(dir, skip));
}

/** Write text files under dir by relative path (folders made as needed), over what is there. */
export function writeTexts(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, ...rel.split('/'));
    fs.mkdirSync(path.dirname(file), {recursive: true});
    fs.rmSync(file, {force: true, recursive: true});
    fs.writeFileSync(file, text);
  }
}

/** A prepared fixture: its tree, and the tree digest recorded when it was materialized. */
export interface PreparedFixture {
  dir: string;
  tree: string;
  digest: string;
}

const DIGEST_FILE = 'tree.sha256';

/**
 * The prepared state of a fixture: <state>/agent/prepared/<fixture digest>/tree, materialized once by `build` (into a
 * fresh folder, renamed into place, so concurrent evaluators meet one tree) and its tree digest recorded beside it.
 * A prepared fixture is never built again: once there it is what every arm copies.
 */
export function preparedFixture(
  stateDir: string,
  fixtureDigest: string,
  build: (tree: string) => void,
): PreparedFixture {
  const dir = path.join(stateDir, 'agent', 'prepared', fixtureDigest);
  const read = (): PreparedFixture | null => {
    let text: string;
    try {
      text = fs.readFileSync(path.join(dir, DIGEST_FILE), 'utf8');
    } catch (error) {
      rethrowUnless(error, isSystemError);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return null;
    }
    const digest = text.trim();
    if (!/^[0-9a-f]{64}$/.test(digest))
      fail('INTEGRITY', `${path.join(dir, DIGEST_FILE)} holds no tree digest; remove ${dir} to prepare it again`, {
        file: path.join(dir, DIGEST_FILE),
      });
    return {dir, tree: path.join(dir, 'tree'), digest};
  };
  const found = read();
  if (found) return found;
  fs.mkdirSync(path.dirname(dir), {recursive: true});
  const temp = path.join(path.dirname(dir), `.${fixtureDigest}.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    fs.mkdirSync(path.join(temp, 'tree'), {recursive: true});
    build(path.join(temp, 'tree'));
    fs.writeFileSync(path.join(temp, DIGEST_FILE), `${treeDigest(path.join(temp, 'tree'))}\n`);
    try {
      fs.renameSync(temp, dir);
    } catch (error) {
      rethrowUnless(error, isSystemError);
      // Another evaluator prepared it first: theirs stands.
      if (!['EEXIST', 'ENOTEMPTY'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    }
  } finally {
    fs.rmSync(temp, {recursive: true, force: true});
  }
  const made = read();
  if (!made) fail('INTEGRITY', `${dir} was not prepared`, {file: dir});
  return made;
}

/** Copy a small tree of files and folders (a session home) into a folder that does not exist yet, modes aside. */
export function copySmallTree(from: string, to: string): void {
  fs.mkdirSync(to);
  for (const e of fs.readdirSync(from, {withFileTypes: true})) {
    if (e.isDirectory()) copySmallTree(path.join(from, e.name), path.join(to, e.name));
    else if (e.isFile()) fs.copyFileSync(path.join(from, e.name), path.join(to, e.name));
  }
}

/** Copy a tree (files, folders and their modes) into a folder that does not exist yet. */
export function copyTree(from: string, to: string): void {
  fs.cpSync(from, to, {recursive: true, mode: fs.constants.COPYFILE_FICLONE, verbatimSymlinks: true});
}

/** A fresh private scratch folder for one arm (mode 700), named at random: nothing in its path names the trial. */
export function scratchFolder(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-agent-'));
}

export function removeFolder(dir: string): void {
  fs.rmSync(dir, {recursive: true, force: true});
}

export function makeFolder(dir: string): void {
  fs.mkdirSync(dir, {recursive: true});
}

export function writeText(file: string, text: string): void {
  fs.writeFileSync(file, text);
}

export function readTextIfPresent(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return null;
  }
}

/** Whether a path is a folder (following links). */
export function isFolder(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return false;
  }
}

/** The real path of a folder, or null when it is none. */
export function realFolder(p: string): string | null {
  return isFolder(p) ? fs.realpathSync(p) : null;
}

/**
 * Copy a prepared tree into a new folder, hashing each file's bytes as they are written: the copy's files (for its
 * tree digest and for the diff later). Anything but a regular file or a folder in it is copied as nothing and listed
 * with no digest, so the tree digest cannot match.
 */
export function copyHashed(from: string, to: string): TreeFile[] {
  const out: TreeFile[] = [];
  const walk = (d: string, dest: string, rel: string) => {
    fs.mkdirSync(dest);
    for (const e of fs.readdirSync(d, {withFileTypes: true})) {
      const p = path.join(d, e.name);
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p, path.join(dest, e.name), r);
      else if (e.isFile()) {
        const fd = fs.openSync(p, 'r');
        let bytes: Buffer;
        let executable: boolean;
        try {
          executable = (fs.fstatSync(fd).mode & 0o100) !== 0;
          bytes = fs.readFileSync(fd);
        } finally {
          fs.closeSync(fd);
        }
        const file = path.join(dest, e.name);
        fs.writeFileSync(file, bytes, {mode: executable ? 0o755 : 0o644});
        out.push({path: r, executable, sha256: sha256(bytes), stamp: stampOf(fs.lstatSync(file))});
      } else out.push({path: r, executable: false, sha256: 'not a regular file'});
    }
  };
  walk(from, to, '');
  return out;
}

/** What says a file was not touched since: its inode, size, modification and change times (any write moves ctime). */
const stampOf = (st: fs.BigIntStats | fs.Stats) => `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

/** A file that differs between two trees: its bytes before and after (null: absent on that side). */
export interface ChangedFile {
  path: string;
  before: Buffer | null;
  after: Buffer | null;
}

/**
 * The files of `after` that differ from `files` (the tree it started as, copied from `before`): a file whose inode
 * still says what it said when it was copied is unchanged; any other is read and hashed, and only a changed one is
 * read from `before`. `skip`: top-level names left out.
 */
export function changedFiles(
  before: string,
  after: string,
  files: readonly TreeFile[],
  skip: readonly string[] = [],
): ChangedFile[] {
  const known = new Map(files.map((f) => [f.path, f.sha256]));
  const stamps = new Map(files.map((f) => [f.path, f.stamp]));
  const seen = new Set<string>();
  const out: ChangedFile[] = [];
  const original = (rel: string) => (known.has(rel) ? fs.readFileSync(path.join(before, ...rel.split('/'))) : null);
  const walk = (d: string, rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, {withFileTypes: true});
    } catch (error) {
      rethrowUnless(error, isSystemError);
      return;
    }
    for (const e of entries) {
      if (rel === '' && skip.includes(e.name)) continue;
      const p = path.join(d, e.name);
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        walk(p, r);
        continue;
      }
      seen.add(r);
      if (e.isFile() && stamps.get(r) !== undefined && stamps.get(r) === stampOf(fs.lstatSync(p))) continue;
      const bytes = e.isFile()
        ? fs.readFileSync(p)
        : e.isSymbolicLink()
          ? Buffer.from(`(a link to ${fs.readlinkSync(p)})\n`)
          : Buffer.from('(not a regular file)\n');
      if (known.get(r) !== sha256(bytes)) out.push({path: r, before: original(r), after: bytes});
    }
  };
  walk(after, '');
  for (const rel of known.keys()) if (!seen.has(rel)) out.push({path: rel, before: original(rel), after: null});
  return out.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
}

/** Remove a folder in the background (an arm's scratch folder, once its answer is out); settles when it is gone. */
export function removeFolderLater(dir: string): Promise<void> {
  return new Promise((resolve) => fs.rm(dir, {recursive: true, force: true}, () => resolve()));
}

/**
 * Keep an artifact: the file <dir>/<sha256 of its bytes> (a temporary file renamed into place; one already there is
 * the same bytes). Returns the digest that names it.
 */
export function writeArtifact(dir: string, bytes: Buffer): string {
  const digest = sha256(bytes);
  const file = path.join(dir, digest);
  if (fs.existsSync(file)) return digest;
  fs.mkdirSync(dir, {recursive: true});
  const temp = path.join(dir, `.${digest}.${process.pid}.${randomBytes(4).toString('hex')}`);
  fs.writeFileSync(temp, bytes, {mode: 0o600});
  fs.renameSync(temp, file);
  return digest;
}
