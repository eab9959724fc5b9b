import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {randomBytes} from 'node:crypto';
import {fail} from '../errors.js';
import {mkdirs} from './fs.js';

/** Who holds a lock; written inside the lock directory right after it is taken. */
export interface LockOwner {
  pid: number;
  hostname: string;
  nonce: string;
  acquired_at: string;
}

export interface LockOptions {
  /** Seconds to wait for the lock before LOCKED (exit 7). */
  timeoutSeconds: number;
}

/** Stale time of the lock heartbeat: far above any critical section (no evaluation runs under a lock). */
function staleMs(): number {
  const v = Number(process.env.AUTOCTX_LOCK_STALE_MS);
  return Number.isFinite(v) && v >= 2000 ? v : 60_000;
}

const OWNER_FILE = 'owner.json';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(lockDir: string): LockOwner | null {
  try {
    const v = JSON.parse(fs.readFileSync(path.join(lockDir, OWNER_FILE), 'utf8')) as LockOwner;
    return typeof v.pid === 'number' && typeof v.nonce === 'string' && typeof v.hostname === 'string' ? v : null;
  } catch {
    return null;
  }
}

/**
 * proper-lockfile removes its lock directory with rmdir; ours holds owner.json,
 * so removal must be recursive (on release and on a heartbeat-stale takeover).
 */
const lockFs = {
  ...fs,
  rmdir: (p: fs.PathLike, cb: (err: NodeJS.ErrnoException | null) => void) => fs.rm(p, {recursive: true, force: true}, cb),
  rmdirSync: (p: fs.PathLike) => fs.rmSync(p, {recursive: true, force: true}),
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One exclusive lock per scenario store, on top of proper-lockfile (mkdir, with
 * a heartbeat). The lock records its owner, so a lock whose owner process is
 * gone (same host) is taken over at once. A holder whose lock was taken over
 * (its heartbeat stopped longer than the stale time) is marked compromised by
 * proper-lockfile's callback instead of crashing, and `assertHeld`, called
 * synchronously right before every rename, makes it abort.
 */
export class StoreLock {
  private release: (() => Promise<void>) | undefined;
  private compromised = false;
  private owner: LockOwner | undefined;

  constructor(
    readonly target: string,
    readonly lockDir: string,
  ) {}

  async acquire(options: LockOptions): Promise<void> {
    const deadline = Date.now() + Math.max(0, options.timeoutSeconds) * 1000;
    const stale = staleMs();
    mkdirs(path.dirname(this.lockDir));
    // Loaded here, not at start-up: read-only commands never pay for it.
    const {default: lockfile} = await import('proper-lockfile');
    for (let attempt = 0; ; attempt++) {
      try {
        this.release = await lockfile.lock(this.target, {
          realpath: false,
          lockfilePath: this.lockDir,
          stale,
          update: Math.max(1000, Math.floor(stale / 4)),
          retries: 0,
          fs: lockFs,
          onCompromised: () => {
            this.compromised = true;
          },
        });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
        if (this.takeOverDeadOwner()) continue;
        if (Date.now() >= deadline) {
          const holder = readOwner(this.lockDir);
          const who = holder ? `process ${holder.pid} on ${holder.hostname} since ${holder.acquired_at}` : 'another process';
          fail('LOCKED', `the store is locked by ${who}; gave up after ${options.timeoutSeconds}s (see --lock-timeout)`, {lock: this.lockDir});
        }
        await sleep(Math.min(250, 20 + attempt * 10) + Math.floor(Math.random() * 20));
      }
    }
    this.owner = {pid: process.pid, hostname: os.hostname(), nonce: randomBytes(8).toString('hex'), acquired_at: new Date().toISOString()};
    // Written in place: a reader that catches it half-written sees no owner and treats the lock as live.
    const ownerFile = path.join(this.lockDir, OWNER_FILE);
    try {
      fs.writeFileSync(ownerFile, JSON.stringify(this.owner));
    } catch (error) {
      await this.releaseLock(); // a lock without its owner is given up at once
      const e = error as NodeJS.ErrnoException;
      if (e && typeof e === 'object' && e.path === undefined) e.path = ownerFile; // write(2) names no file
      throw error;
    }
  }

  /** Remove a lock left by a dead process on this host. Rename first, so only one taker wins. */
  private takeOverDeadOwner(): boolean {
    const holder = readOwner(this.lockDir);
    if (!holder || holder.hostname !== os.hostname() || processAlive(holder.pid)) return false;
    const grave = `${this.lockDir}.stale-${randomBytes(4).toString('hex')}`;
    try {
      fs.renameSync(this.lockDir, grave);
    } catch {
      return true; // someone else moved it; try again at once
    }
    const moved = readOwner(grave);
    if (moved && moved.nonce !== holder.nonce) {
      // A live process took the lock between our look and our rename: give it back.
      try {
        fs.renameSync(grave, this.lockDir);
      } catch {
        // It re-created the lock meanwhile; its own assertHeld check will see the change.
      }
      return false;
    }
    fs.rmSync(grave, {recursive: true, force: true});
    return true;
  }

  /** Synchronously confirm that this process still holds the lock; abort otherwise. */
  assertHeld(): void {
    if (!this.owner) fail('LOCK_LOST', 'the store lock is not held');
    if (this.compromised) fail('LOCK_LOST', 'the store lock was taken over by another process (its heartbeat lapsed); nothing more was written');
    const current = readOwner(this.lockDir);
    if (!current || current.nonce !== this.owner.nonce) {
      fail('LOCK_LOST', 'the store lock now belongs to another process; nothing more was written');
    }
  }

  async releaseLock(): Promise<void> {
    const release = this.release;
    this.release = undefined;
    this.owner = undefined;
    if (!release) return;
    try {
      await release();
    } catch {
      // Already released or compromised: nothing of ours is left to remove.
    }
  }
}
