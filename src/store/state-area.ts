import fs from 'node:fs';
import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../errors.js';
import {housekeepingDue, recordHousekeeping} from './kinds/common/housekeeping.js';
import {readDocument} from './documents.js';
import {exists, isDirectory, mkdirDurable, readBytes, walkTree, type RootGuard} from './files/fs.js';
import {StoreLock} from './files/lock.js';
import {LockedWriter} from './files/locked-writer.js';
import {leftoverKind, RootPaths} from './paths.js';
import type {SchemaName} from './schemas.js';
import type {JsonValue} from '../canonical/index.js';

export const STATE_DIR_MODE = 0o700;
/** The state areas whose housekeeping this process has looked at. */
const HOUSEKEPT = new Set<string>();
export const STATE_FILE_MODE = 0o600;

/** What the state area's own .gitignore holds: everything in it stays out of git. */
export const STATE_GITIGNORE =
  '# autoctx: per-machine state (receipts, counters, sealed evidence); never committed\n*\n';

/**
 * The per-machine state area, knowledge/.state/ (ARCHITECTURE §11): what must
 * never be committed (delivery receipts, shadow counters, sealed evidence
 * packages, host state). Folders are 0700 and files 0600, it ignores itself
 * in git, and it has its own lock, taken after any scenario lock. That lock
 * also guards the root-level documents (the root's .gitignore). verify skips
 * exactly this folder.
 */
export class StateArea {
  readonly paths: RootPaths;
  private lock: StoreLock | undefined;
  readonly writer: LockedWriter;

  constructor(readonly guard: RootGuard) {
    this.paths = new RootPaths(guard.root);
    this.writer = new LockedWriter(guard, () => this.lock, 'the state area', {
      mode: STATE_FILE_MODE,
      dirMode: STATE_DIR_MODE,
    });
  }

  get dir(): string {
    return this.paths.stateDir;
  }

  /**
   * Make the folder (0700) if it is missing, and tighten one whose mode is wider. Refuses a link or a file in its
   * place.
   */
  private ensureDir(): void {
    this.guard.check(this.dir);
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(this.dir);
    } catch (error) {
      rethrowUnless(error, isSystemError);
      st = undefined;
    }
    if (st && !st.isDirectory())
      fail(
        'UNSAFE_PATH',
        `${this.guard.relative(this.dir)} is not a folder (a link or a file stands where the state area belongs)`,
        {file: this.guard.relative(this.dir)},
      );
    if (!st) fs.mkdirSync(this.dir, {mode: STATE_DIR_MODE});
    if (((st?.mode ?? STATE_DIR_MODE) & 0o777) !== STATE_DIR_MODE || !st) fs.chmodSync(this.dir, STATE_DIR_MODE);
  }

  /** Run fn holding the state area's lock (waiting up to timeoutSeconds, then LOCKED, exit 7). */
  async withLock<T>(timeoutSeconds: number, fn: () => T | Promise<T>): Promise<T> {
    this.ensureDir();
    const lock = new StoreLock(this.paths.stateLockTarget, this.paths.stateLock);
    await lock.acquire({timeoutSeconds});
    this.lock = lock;
    try {
      const result = await this.writer.transaction(() => {
        if (readBytes(this.guard, this.paths.stateGitignore)?.toString('utf8') !== STATE_GITIGNORE)
          this.writer.replace(this.paths.stateGitignore, STATE_GITIGNORE);
        return fn();
      });
      // Housekeeping only after the step succeeded, as in a scenario store: a step that fails changes nothing.
      this.housekeeping();
      return result;
    } finally {
      this.lock = undefined;
      await lock.releaseLock();
    }
  }

  /**
   * Once a day, and looked at once per process: remove the temporary files
   * a killed writer left anywhere in the area (.state/housekeeping.json says
   * when it last ran). They are only ever made under this lock, so none
   * belongs to a live writer, and none is ever read. Not every time: the
   * area grows with receipts, sessions and sealed evidence, and a hook is a
   * new process each time. Best effort: the step itself has succeeded.
   */
  private housekeeping(): void {
    if (HOUSEKEPT.has(this.dir)) return;
    HOUSEKEPT.add(this.dir);
    const now = new Date();
    try {
      if (!housekeepingDue(this, 'swept_at', now)) return;
      this.sweepAll();
      recordHousekeeping(this, 'swept_at', now);
    } catch (error) {
      rethrowUnless(error, isAutoctxError);
    }
  }

  /**
   * Under the state lock: remove every temporary file an interrupted writer left anywhere in the area (daily, and
   * repair); the paths removed.
   */
  sweepAll(): string[] {
    if (!this.lock) fail('INTERNAL', 'internal: a sweep of the state area without its lock');
    const removed: string[] = [];
    for (const e of walkTree(this.guard, this.dir)) {
      if (e.kind !== 'file' || leftoverKind(e.path, 'file') !== 'temp') continue;
      this.writer.remove(e.path);
      removed.push(e.path);
    }
    return removed;
  }

  /** Whether this process holds the state lock now. */
  get locked(): boolean {
    return this.lock !== undefined;
  }

  exists(): boolean {
    return exists(this.dir);
  }

  /**
   * A folder inside the state area (0700), made under the state lock so that
   * the area and its .gitignore exist first; returns its path.
   */
  async folder(timeoutSeconds: number, ...segments: string[]): Promise<string> {
    const dir = this.paths.stateFile(...segments);
    this.guard.check(dir);
    if (isDirectory(dir) && isDirectory(this.dir) && exists(this.paths.stateGitignore)) return dir;
    await this.withLock(timeoutSeconds, () => mkdirDurable(this.guard, dir, STATE_DIR_MODE));
    return dir;
  }

  /** A path inside the state area, from safe segments. */
  file(...segments: string[]): string {
    return this.paths.stateFile(...segments);
  }

  readDocument<T>(file: string, schema: SchemaName, check?: (value: JsonValue) => T): T | null {
    return readDocument<T>(this.guard, file, schema, check);
  }

  readBytes(file: string): Buffer | null {
    return readBytes(this.guard, file);
  }
}
