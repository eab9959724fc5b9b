import type {Dirent} from 'node:fs';
import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../errors.js';
import {exists, isDirectory, listDir, readBytes, walkTree, type RootGuard, type TreeEntry} from './files/fs.js';
import {readGitignore} from './kinds/common/gitignore.js';
import type {KindContext} from './kinds/common/kind-context.js';
import {backoffMs, pausePoint, removeAbandonedLock, StoreLock} from './files/lock.js';
import {LockedWriter} from './files/locked-writer.js';
import {leftoverKind, ScenarioPaths} from './paths.js';
import {StateArea} from './state-area.js';
import {updateGitignore} from './kinds/common/gitignore.js';
import {appendStateChange, chainTracked} from './kinds/signing/state-chain.js';
import {
  JOURNAL_FORMAT,
  readJournal,
  RunJournal,
  type JournalHeader,
  type JournalRead,
} from './kinds/evaluation/run-journal.js';
import path from 'node:path';

/**
 * One scenario's context-bundle store: the document kinds of src/store/kinds,
 * bound to this scenario and its lock. Every write goes through the locked
 * writer, which refuses to run without the scenario lock and re-checks it
 * synchronously right before each rename.
 */
export class ScenarioStore implements KindContext {
  readonly paths: ScenarioPaths;
  readonly writer: LockedWriter;
  /** Signs the records that carry signatures (null: this use of the store signs nothing). */
  signer: ((kind: string, digest: string) => string) | null = null;
  /** The principal a signing store's state changes are chained as (signing/chain/; null: no chain entries). */
  chainActor: string | null = null;
  /**
   * Prepares signing for a step of a signed scenario when the command did not (it throws when it cannot: no key, broken
   * trust).
   */
  lateSigning: (() => void) | null = null;
  private lock: StoreLock | undefined;

  constructor(
    readonly guard: RootGuard,
    readonly scenario: string,
  ) {
    this.paths = new ScenarioPaths(guard.root, scenario);
    this.writer = new LockedWriter(guard, () => this.lock, `scenario "${scenario}"`);
  }

  // ---- locking ----

  /** Remove a lock in this scenario whose owner is provably gone (repair); true when removed. */
  removeAbandonedLock(file: string): boolean {
    this.guard.check(file);
    return removeAbandonedLock(file);
  }

  /**
   * Take the lock of one candidate's evaluation run and return its release.
   * Locks are taken in one order (scenario, campaign, run, state): the run
   * lock is claimed only while the scenario lock is held, and never waited
   * for under it. When another run holds it, the scenario lock is let go and
   * the claim is tried again, up to timeoutSeconds (then LOCKED, exit 7).
   * The run keeps it across the scenario lock's per-commit holds; since no
   * process waits for a run lock while holding the scenario lock, the two
   * cannot deadlock. The candidate's folder must exist.
   */
  async acquireRunLock(digest: string, timeoutSeconds: number): Promise<() => Promise<void>> {
    const file = this.paths.runLock(digest);
    this.guard.check(file);
    if (!isDirectory(this.paths.candidateDir(digest)))
      fail('INVALID_TRANSITION', `bundle ${digest} is not a proposed candidate (no candidate folder)`);
    const lock = new StoreLock(this.paths.candidateDir(digest), file);
    const deadline = Date.now() + Math.max(0, timeoutSeconds) * 1000;
    for (let attempt = 0; ; attempt++) {
      const left = Math.max(0, (deadline - Date.now()) / 1000);
      let claimed = false;
      try {
        claimed = await this.withLock(left, () => lock.tryAcquire());
      } catch (error) {
        await lock.releaseLock(); // claimed, then the scenario step failed: let the claim go too
        throw error;
      }
      if (claimed) return () => lock.releaseLock();
      if (Date.now() >= deadline)
        fail(
          'LOCKED',
          `${lock.holderText(`candidate ${digest}'s evaluation run`)}; gave up after ${timeoutSeconds}s ` +
            `(see --lock-timeout)`,
          {lock: file},
        );
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
    }
  }

  /**
   * The journal of a run of this candidate (only the run lock's holder may
   * call this), and the pairs an earlier
   * run left in it, not yet folded (null: none).
   */
  async openRunJournal(
    digest: string,
    planDigest: string,
    timeoutSeconds: number,
  ): Promise<{journal: RunJournal; pending: JournalRead | null}> {
    const area = new StateArea(this.guard);
    const header: JournalHeader = {
      format: JOURNAL_FORMAT,
      version: 1,
      candidate_digest: digest,
      plan_digest: planDigest,
    };
    const file = path.join(area.file('runs', this.scenario), `${digest}.jsonl`);
    // Its folder is made before the first pair is appended: a run that records nothing leaves nothing.
    const journal = new RunJournal(this.guard, file, header, () => area.folder(timeoutSeconds, 'runs', this.scenario));
    return {journal, pending: readJournal(this.guard, file, header)};
  }

  /** Pairs of this candidate's run journal, not yet folded, under any plan (a rebind requires none). */
  journalPairs(digest: string, planDigest: string): number {
    const area = new StateArea(this.guard);
    const file = path.join(area.file('runs', this.scenario), `${digest}.jsonl`);
    const read = readJournal(this.guard, file, {
      format: JOURNAL_FORMAT,
      version: 1,
      candidate_digest: digest,
      plan_digest: planDigest,
    });
    if (read === null) return 0;
    // A journal of another plan, or one that cannot be read, may still hold observations: counted as one.
    return read.refused !== null ? Math.max(1, read.trials.length) : read.trials.length;
  }

  /**
   * Run fn holding the scenario lock. After a step that succeeds, temporary
   * files an interrupted writer left in the folders this process wrote into
   * are removed (each folder once), and after the process's first such step
   * the root's .gitignore is brought up to date (under the state area's lock,
   * which comes after). A step that fails leaves both as they were. Nothing
   * here walks the tree: leftovers elsewhere are verify's to report
   * (LEFTOVER_TEMP) and repair's to remove. A rehearsal runs fn the same way
   * and puts back everything it wrote, also when it succeeds: it tells whether
   * the step would be refused.
   */
  async withLock<T>(timeoutSeconds: number, fn: () => T | Promise<T>, rehearse = false): Promise<T> {
    const lock = new StoreLock(this.paths.lockTarget, this.paths.lock);
    this.guard.check(this.paths.contextDir);
    // In a signed scenario every step that changes the state is signed: a command that did not prepare its signing
    // is signed now (its key from its options, the environment or the user config), before anything is locked; when it
    // cannot be, the step is refused right before its first change of a file the chain tracks, and undone.
    const signedTree = exists(this.paths.signingStart);
    let refusal: unknown = null;
    if (signedTree && !this.signer && this.lateSigning) {
      try {
        this.lateSigning();
      } catch (error) {
        if (!isAutoctxError(error)) throw error;
        refusal = error;
      }
    }
    await lock.acquire({timeoutSeconds});
    this.lock = lock;
    pausePoint('scenario:locked');
    let undone: unknown = null;
    let refused: unknown = null;
    this.writer.beforeChange =
      signedTree && !this.signer
        ? (file) => {
            if (refused === null && !chainTracked(this, file)) return;
            try {
              refuseUnsigned(this, refusal, file, (e) => (undone = e));
            } catch (error) {
              refused = error;
              throw error;
            }
          }
        : null;
    try {
      const result = await this.writer
        .transaction(async () => {
          // In a signed scenario every step that changed the state ends with its signed chain entry, also one that
          // ends in a refusal that keeps what it wrote (not exit 2 or 9, which put it back): what is on disk is
          // chained. A refusal of an unsigned change stands even when the step caught it.
          const chain = () => {
            if (refused !== null) throw refused;
            if (this.signer && this.chainActor !== null)
              appendStateChange(this, this.chainActor, this.writer.stepFiles());
          };
          let value: T;
          try {
            value = await fn();
          } catch (error) {
            if (isAutoctxError(error) && error.exitCode !== 2 && error.exitCode !== 9 && error.exitCode !== 1) chain();
            throw error;
          }
          chain();
          return value;
        }, rehearse)
        .catch((error: unknown) => {
          throw undone ?? error; // a refusal other than exit 2, raised once the step is undone
        });
      if (rehearse) return result;
      // Housekeeping only after the step succeeded: a command that fails changes nothing, not even leftovers or the
      // .gitignore.
      this.sweepLeftovers();
      if (!this.gitignoreChecked) {
        this.gitignoreChecked = true;
        await this.updateGitignore(timeoutSeconds);
      }
      return result;
    } finally {
      this.writer.beforeChange = null;
      this.lock = undefined;
      await lock.releaseLock();
    }
  }

  /**
   * Hold the scenario lock while `fn` replaces files from outside the writer (reconcile making the tree a verified
   * stage's): no transaction, no signing, no housekeeping.
   */
  async withBareLock<T>(timeoutSeconds: number, fn: () => T | Promise<T>): Promise<T> {
    const lock = new StoreLock(this.paths.lockTarget, this.paths.lock);
    this.guard.check(this.paths.contextDir);
    await lock.acquire({timeoutSeconds});
    this.lock = lock;
    try {
      return await fn();
    } finally {
      this.lock = undefined;
      await lock.releaseLock();
    }
  }

  /** True while this process holds the scenario lock. */
  get locked(): boolean {
    return this.lock !== undefined;
  }

  private gitignoreChecked = false;
  private readonly swept = new Set<string>();

  /**
   * Remove the temporary files an interrupted writer left in each folder this
   * process wrote into, once per folder: under the scenario lock no live
   * writer of this scenario has one.
   */
  private sweepLeftovers(): void {
    for (const dir of this.writer.folders) {
      if (this.swept.has(dir) || !dir.startsWith(this.paths.dir)) continue;
      this.swept.add(dir);
      for (const entry of listDir(this.guard, dir)) {
        // Every temp name ends so (tempPath): a folder of thousands of bundles costs one test a name.
        if (!entry.name.endsWith('.tmp') || !entry.isFile()) continue;
        const file = path.join(dir, entry.name);
        if (leftoverKind(file, 'file') === 'temp') this.writer.remove(file);
      }
    }
  }

  /** Add the rules the root's .gitignore lacks, when it has one. */
  private async updateGitignore(timeoutSeconds: number): Promise<void> {
    const state = readGitignore(this.guard);
    if (state === null || (state.removed.length === 0 && state.outdated.length === 0)) return;
    const area = new StateArea(this.guard);
    await area.withLock(timeoutSeconds, () => updateGitignore(area.writer, {create: false}));
  }

  /** Every entry of the scenario folder, links not followed. */
  walk(listings?: Map<string, Dirent[]>): TreeEntry[] {
    return walkTree(this.guard, this.paths.dir, listings);
  }

  /** Where a path really leads, to tell links inside the root from links out of it. */
  linkStaysInside(file: string): boolean {
    try {
      this.guard.check(file);
      return true;
    } catch (error) {
      rethrowUnless(error, isAutoctxError, isSystemError);
      return false;
    }
  }
}

/**
 * A step of a signed scenario about to change a file the signed state chain
 * tracks, with no key to sign it: refused with exit 2 before the change, so
 * that the step is undone (knowledge/ left as it was). Why there was no key
 * (none given, or trust that does not hold: then that error, raised after the
 * undo) is named.
 */
function refuseUnsigned(store: ScenarioStore, refusal: unknown, file: string, after: (error: unknown) => void): never {
  if (isAutoctxError(refusal) && refusal.exitCode !== 2) after(refusal);
  const why =
    isAutoctxError(refusal) && refusal.exitCode === 2 && refusal.code !== 'SIGNING_KEY_REQUIRED'
      ? `: ${refusal.message}`
      : '';
  fail(
    'SIGNING_KEY_REQUIRED',
    `scenario "${store.scenario}" is signed, and this command changes ${store.guard.relative(file)}: every ` +
      `state change in a signed tree is signed and chained; give --signing-key FILE (or $AUTOCTX_SIGNING_KEY, or ` +
      `signing_key in the user config)${why}; nothing was written`,
    {file: store.guard.relative(file)},
  );
}
