import fs from 'node:fs';
import path from 'node:path';
import {randomBytes} from 'node:crypto';
import {environmentError, fail, isAutoctxError, isSystemError, rethrowUnless, type AutoctxError} from '../../errors.js';
import {tempPath} from '../paths.js';
import {writeDocument, writeImmutableDocument} from '../documents.js';
import {
  atomicWrite,
  createImmutable,
  exists,
  fsyncDir,
  mkdirDurable,
  removeFile,
  type RootGuard,
  type WriteData,
  type WriteOptions,
} from './fs.js';
import type {StoreLock} from './lock.js';
import type {SchemaName} from '../schemas.js';

/**
 * The one way a document is written: atomic replace and immutable create, both
 * refusing to run unless the lock that guards the file is held, and both
 * confirming it synchronously right before the rename or link that publishes
 * the file. A refusing environment (no space, a read-only file system,
 * permission denied, too many open files) is exit 9, naming the file.
 *
 * Writes under one lock hold are one step: `transaction` keeps the version of
 * every file it replaces or removes as a hard link (no data is copied, so it
 * works on a full disk), and when the environment refuses a write it puts
 * every file of the step back as it was and removes what the step created.
 * A crash leaves the links as temporary files, which the next writer sweeps.
 */
export class LockedWriter {
  constructor(
    readonly guard: RootGuard,
    private readonly held: () => StoreLock | undefined,
    /** What the lock guards, for the internal error when it is not held. */
    readonly what: string,
    /** Modes for what this writer creates (the state area's 0600 files and 0700 folders). */
    private readonly modes: {mode?: number; dirMode?: number} = {},
  ) {}

  private options(extra: Omit<WriteOptions, 'beforePublish'> = {}): WriteOptions {
    const lock = this.held();
    if (!lock) fail('INTERNAL', `internal: a write to ${this.what} without its lock`);
    return {...this.modes, ...extra, beforePublish: () => lock.assertHeld()};
  }

  /** Every folder a write of this process went into (its leftovers are swept once the step succeeds). */
  readonly folders = new Set<string>();

  /** Called with each file right before this writer changes it; it may refuse the change by throwing. */
  beforeChange: ((file: string) => void) | null = null;

  /**
   * The files the current step changed: each with the link that keeps its previous version (null: it did not exist).
   */
  private journal: Array<{file: string; previous: string | null; folder?: true}> | null = null;

  /** Record the folders a write to `file` will create, outermost first, so that an undo removes them again. */
  private rememberFolders(file: string): void {
    if (!this.journal) return;
    const missing: string[] = [];
    for (let dir = path.dirname(file); !exists(dir) && dir !== path.dirname(dir); dir = path.dirname(dir))
      missing.push(dir);
    for (const dir of missing.reverse()) this.journal.push({file: dir, previous: null, folder: true});
  }

  /**
   * Run fn as one step: when the environment refuses a write (exit 9), or the
   * step finds its input bad (exit 2: a campaign candidate refused for
   * fixture reuse after its alpha was reserved, say), every file the step
   * changed is put back and the error is raised, so a failed command changes
   * nothing; on success the kept versions are dropped. Other errors leave
   * what the step wrote, as a crash would (the same command run again, or
   * repair, completes it). A rehearsal is put back even when it succeeds.
   */
  async transaction<T>(fn: () => T | Promise<T>, rehearse = false): Promise<T> {
    this.journal = [];
    try {
      const result = await fn();
      this.settle(rehearse);
      return result;
    } catch (error) {
      const environment = isAutoctxError(error) && error.exitCode === 9;
      const refused = isAutoctxError(error) && error.exitCode === 2;
      this.settle(environment || refused);
      throw environment ? undone(error as AutoctxError) : error;
    } finally {
      this.journal = null;
    }
  }

  /** The files the current step has changed so far (created, replaced or removed). */
  stepFiles(): string[] {
    return (this.journal ?? []).filter((j) => !j.folder).map((j) => j.file);
  }

  /** Keep the version of a file the step is about to change, once per step. */
  private remember(file: string): void {
    this.folders.add(path.dirname(file));
    if (!this.journal || this.journal.some((j) => j.file === file)) return;
    let previous: string | null = null;
    if (exists(file)) {
      let st: fs.Stats;
      try {
        st = fs.lstatSync(file);
      } catch (error) {
        rethrowUnless(error, isSystemError);
        return;
      }
      if (!st.isFile()) return; // a leftover folder: nothing to restore
      previous = tempPath(file, `undo${randomBytes(4).toString('hex')}`);
      this.run(() => fs.linkSync(file, previous!));
    } else this.rememberFolders(file);
    this.journal.push({file, previous});
  }

  /**
   * Drop the kept versions, or (undo) put them back and remove what the step created; best effort, in reverse order.
   */
  private settle(undo: boolean): void {
    const journal = this.journal ?? [];
    for (const {file, previous, folder} of [...journal].reverse()) {
      try {
        if (folder) {
          if (undo) fs.rmdirSync(file); // only when empty: a folder that holds anything else stays
          continue;
        }
        if (undo && previous !== null) {
          fs.renameSync(previous, file);
          // rename(2) of two links to one file does nothing: the file was never replaced
          fs.rmSync(previous, {force: true});
        } else if (undo) fs.rmSync(file, {force: true});
        else if (previous !== null) fs.rmSync(previous, {force: true});
        if (undo) fsyncDir(path.dirname(file));
      } catch (error) {
        rethrowUnless(error, isSystemError);
        // Left as a crash would leave it: the next writer sweeps the link, and verify names the rest.
      }
    }
  }

  private run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw environmentError(error, (p) => this.guard.relative(p)) ?? error;
    }
  }

  /** Replace a file atomically (readers see the old or the new one, whole). */
  replace(file: string, data: WriteData, extra?: Omit<WriteOptions, 'beforePublish'>): void {
    const options = this.options(extra);
    this.beforeChange?.(file);
    this.remember(file);
    this.run(() => atomicWrite(this.guard, file, data, options));
  }

  /** Replace a mutable document atomically, after checking it against its schema. */
  replaceDocument(file: string, schema: SchemaName, value: unknown, extra?: Omit<WriteOptions, 'beforePublish'>): void {
    const options = this.options(extra);
    this.beforeChange?.(file);
    this.remember(file);
    this.run(() => writeDocument(this.guard, file, schema, value, options));
  }

  /** Create a file that never changes; an existing one must be equal (else IMMUTABLE_CONFLICT). True when created. */
  create(file: string, data: WriteData, same: (existing: Buffer) => boolean): boolean {
    return this.createWith(file, (options) => createImmutable(this.guard, file, data, same, options));
  }

  /** Create an immutable document; an existing one must be semantically equal. True when created. */
  createDocument(file: string, schema: SchemaName, value: unknown): boolean {
    return this.createWith(file, (options) => writeImmutableDocument(this.guard, file, schema, value, options));
  }

  /** An immutable create, journaled so that an undo removes the file (and the folders made for it) again. */
  private createWith(file: string, publish: (options: WriteOptions) => boolean): boolean {
    const options = this.options();
    this.folders.add(path.dirname(file));
    const absent = !exists(file);
    if (absent) this.beforeChange?.(file);
    if (absent) this.rememberFolders(file);
    const created = this.run(() => publish(options));
    if (created && absent) this.journal?.push({file, previous: null});
    return created;
  }

  /** Remove a file or folder (a leftover, or a mirror with nothing to mirror). */
  remove(file: string): void {
    const options = this.options();
    this.beforeChange?.(file);
    this.remember(file);
    this.run(() => removeFile(this.guard, file, options));
  }

  /** Create a folder (and its parents) durably, with a mode for the state area. */
  mkdir(dir: string): void {
    this.options();
    this.run(() => mkdirDurable(this.guard, dir, this.modes.dirMode));
  }
}

/** The refusal, saying that the step's files were put back. */
function undone(error: AutoctxError): AutoctxError {
  return Object.assign(error, {
    message: error.message.replace(
      /; nothing was changed by this command$/,
      '; every file this step had written was put back as it was',
    ),
  });
}
