import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {randomBytes} from 'node:crypto';
import {fail, isSystemError, rethrowUnless, isJsonParseError} from '../../errors.js';
import {mkdirs} from './fs.js';

/**
 * Who holds a lock. The lock is this document itself: it is written whole to
 * a private file, flushed, then published with link(2), which fails if the
 * lock exists. So the owner exists from the moment the lock does.
 */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** The kernel's boot id (Linux), so that a pid from before a reboot is known gone. */
  boot_id: string | null;
  /** The process's start time in clock ticks since boot (Linux), so that a reused pid is not mistaken for the owner. */
  start_time: string | null;
  nonce: string;
  acquired_at: string;
}

export interface LockOptions {
  /** Seconds to wait for the lock before LOCKED (exit 7). */
  timeoutSeconds: number;
}

/** Stale time of the lock heartbeat: far above any critical section (no evaluation runs under a lock). */
export function staleMs(): number {
  const v = Number(process.env.AUTOCTX_LOCK_STALE_MS);
  return Number.isFinite(v) && v >= 2000 ? v : 60_000;
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return null;
  }
}

let bootId: string | null | undefined;
function currentBootId(): string | null {
  if (bootId === undefined) bootId = readText('/proc/sys/kernel/random/boot_id')?.trim() || null;
  return bootId;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
export function processStartTime(pid: number): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    rethrowUnless(error, isSystemError, (e) => (e as NodeJS.ErrnoException | null)?.code === 'ERR_INVALID_ARG_TYPE');
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the owner is provably gone: on this host, from another boot, or a
 * pid that is dead, or alive but started at another time (reused). A lock
 * from another host is never judged by its pid (only by its heartbeat).
 */
export function ownerGone(owner: LockOwner): boolean {
  if (owner.hostname !== os.hostname()) return false;
  const boot = currentBootId();
  if (owner.boot_id !== null && boot !== null && owner.boot_id !== boot) return true;
  if (!processAlive(owner.pid)) return true;
  if (owner.start_time !== null) {
    const now = processStartTime(owner.pid);
    if (now !== null && now !== owner.start_time) return true;
  }
  return false;
}

/** This process as an owner record (of a lock, or of a temporary folder that the next run may sweep). */
export function ownerRecord(): LockOwner {
  return {
    pid: process.pid,
    hostname: os.hostname(),
    boot_id: currentBootId(),
    start_time: processStartTime(process.pid),
    nonce: randomBytes(8).toString('hex'),
    acquired_at: new Date().toISOString(),
  };
}

/** The owner recorded in a file, or null when it is missing or not one. */
export function readOwnerFile(file: string): LockOwner | null {
  return parseOwner(readText(file));
}

function parseOwner(text: string | null): LockOwner | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as LockOwner | null;
    if (v === null || typeof v.pid !== 'number' || typeof v.nonce !== 'string' || typeof v.hostname !== 'string')
      return null;
    return {
      ...v,
      boot_id: typeof v.boot_id === 'string' ? v.boot_id : null,
      start_time: typeof v.start_time === 'string' ? v.start_time : null,
    };
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    return null;
  }
}

/** The owner of a lock: the lock file itself, or (a lock folder an older autoctx made) its owner.json. */
function readOwner(lock: string): LockOwner | null {
  const owner = parseOwner(readText(lock));
  return owner ?? parseOwner(readText(path.join(lock, 'owner.json')));
}

function mtimeMs(p: string): number | null {
  try {
    return fs.lstatSync(p).mtimeMs;
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return null;
  }
}

function removeAny(p: string): void {
  fs.rmSync(p, {recursive: true, force: true});
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A testing aid, like AUTOCTX_FAULT (docs/guarantees.md): AUTOCTX_PAUSE=<point>
 * (or <point>@<n>, the n-th time it is reached; several, comma-separated)
 * makes the process stop itself with SIGSTOP when it reaches that named
 * point, so that a test can force one interleaving of two processes and
 * resume it with SIGCONT. AUTOCTX_PAUSE_TRACE=<file> gets one line per pause.
 * Unset, it costs one environment lookup.
 */
const pauseHits = new Map<string, number>();
export function pausePoint(point: string): void {
  const want = process.env.AUTOCTX_PAUSE;
  if (!want) return;
  const hit = (pauseHits.get(point) ?? 0) + 1;
  pauseHits.set(point, hit);
  const match = want.split(',').some((w) => {
    const [name, nth] = w.split('@');
    return name === point && (nth === undefined ? hit === 1 : Number(nth) === hit);
  });
  if (!match) return;
  if (process.env.AUTOCTX_PAUSE_TRACE) fs.appendFileSync(process.env.AUTOCTX_PAUSE_TRACE, `${process.pid} ${point}\n`);
  process.kill(process.pid, 'SIGSTOP');
}

/** How long a waiter sleeps before its next try: growing to a quarter second, with jitter. */
export function backoffMs(attempt: number): number {
  return Math.min(250, 20 + attempt * 10) + Math.floor(Math.random() * 20);
}

/**
 * One exclusive lock: a file published whole with link(2), kept fresh by a
 * heartbeat (its mtime), taken over only when its owner is provably gone or
 * its heartbeat is past the stale time, and released only by its owner
 * (renamed away, then checked). A holder whose lock was taken over learns it
 * from `assertHeld`, called synchronously right before every rename, and
 * aborts (LOCK_LOST). proper-lockfile is not used: it creates its lock with
 * mkdir(2), which cannot publish an owner with the lock, and its heartbeat
 * belongs to its own acquisition.
 */
export class StoreLock {
  private owner: LockOwner | undefined;
  private compromised = false;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    readonly target: string,
    /** The lock file. */
    readonly lockPath: string,
  ) {}

  /** Take the lock, waiting up to options.timeoutSeconds (then LOCKED, exit 7). */
  async acquire(options: LockOptions): Promise<void> {
    const deadline = Date.now() + Math.max(0, options.timeoutSeconds) * 1000;
    for (let attempt = 0; ; attempt++) {
      if (this.attempt()) return;
      if (Date.now() >= deadline)
        fail('LOCKED', `${this.holderText()}; gave up after ${options.timeoutSeconds}s (see --lock-timeout)`, {
          lock: this.lockPath,
        });
      await sleep(backoffMs(attempt));
    }
  }

  /**
   * Take the lock if it can be had now (free, or its owner provably gone),
   * never waiting: a lock later in the order is claimed this way while an
   * earlier one is held, so no process waits while holding a lock.
   */
  tryAcquire(): boolean {
    return this.attempt();
  }

  /** Who holds the lock, for a LOCKED message. */
  holderText(what = 'the store'): string {
    const holder = readOwner(this.lockPath);
    return (
      `${what} is locked by ` +
      `${holder ? `process ${holder.pid} on ${holder.hostname} since ${holder.acquired_at}` : 'another process'}`
    );
  }

  /** One try: publish our owner with link(2), or take over an abandoned lock and try again. */
  private attempt(): boolean {
    const stale = staleMs();
    mkdirs(path.dirname(this.lockPath));
    const owner = ownerRecord();
    const prepared = `${this.lockPath}.owner-${owner.nonce}.tmp`;
    const prepare = () => {
      try {
        const fd = fs.openSync(prepared, 'w', 0o600);
        try {
          fs.writeSync(fd, JSON.stringify(owner));
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      } catch (error) {
        const e = error as NodeJS.ErrnoException;
        if (e && typeof e === 'object' && e.path === undefined) e.path = prepared; // write(2) names no file
        throw error;
      }
    };
    try {
      prepare();
      for (let tries = 0; ; tries++) {
        try {
          fs.linkSync(prepared, this.lockPath);
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT' && tries < 100) {
            prepare(); // swept by a holder as a leftover: write it again
            continue;
          }
          if (code !== 'EEXIST') throw error;
        }
        if (tries < 100 && this.takeOver(stale)) continue;
        return false;
      }
    } finally {
      removeAny(prepared);
    }
    this.owner = owner;
    this.compromised = false;
    const beat = () => {
      const current = readOwner(this.lockPath);
      if (!current || current.nonce !== owner.nonce) {
        this.compromised = true;
        this.stopHeartbeat();
        return;
      }
      const now = new Date();
      try {
        fs.utimesSync(this.lockPath, now, now);
      } catch (error) {
        rethrowUnless(error, isSystemError);
        // Gone between the look and the touch: the next beat or assertHeld sees it.
      }
    };
    this.heartbeat = setInterval(beat, Math.max(500, Math.floor(stale / 4)));
    this.heartbeat.unref();
    return true;
  }

  /**
   * Move aside a lock whose owner is provably gone, or whose heartbeat is past
   * the stale time. Rename first, so that one taker wins; a lock that turns
   * out to be another than the one judged is put back.
   */
  private takeOver(stale: number): boolean {
    const holder = readOwner(this.lockPath);
    const mtime = mtimeMs(this.lockPath);
    if (mtime === null) return true; // released meanwhile: try again at once
    const lapsed = Date.now() - mtime > stale;
    if (!lapsed && (!holder || !ownerGone(holder))) return false;
    const grave = `${this.lockPath}.stale-${randomBytes(4).toString('hex')}`;
    try {
      fs.renameSync(this.lockPath, grave);
    } catch (error) {
      rethrowUnless(error, isSystemError);
      return true; // someone else moved it; try again at once
    }
    const moved = readOwner(grave);
    if (holder && moved && moved.nonce !== holder.nonce) {
      // A live process took the lock between our look and our rename: give it back.
      try {
        fs.linkSync(grave, this.lockPath);
      } catch (error) {
        rethrowUnless(error, isSystemError);
        // The lock was taken again meanwhile; the displaced holder's assertHeld sees it.
      }
      removeAny(grave);
      return false;
    }
    removeAny(grave);
    return true;
  }

  /** Synchronously confirm that this process still holds the lock; abort otherwise. */
  assertHeld(): void {
    if (!this.owner) fail('LOCK_LOST', 'the store lock is not held');
    if (this.compromised)
      fail(
        'LOCK_LOST',
        'the store lock was taken over by another process (its heartbeat lapsed); nothing more was written',
      );
    const current = readOwner(this.lockPath);
    if (!current || current.nonce !== this.owner.nonce) {
      this.compromised = true;
      fail('LOCK_LOST', 'the store lock now belongs to another process; nothing more was written');
    }
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** Release: rename the lock away, then check it was ours; another's is put back. */
  async releaseLock(): Promise<void> {
    const owner = this.owner;
    this.owner = undefined;
    this.stopHeartbeat();
    if (!owner) return;
    const away = `${this.lockPath}.stale-${randomBytes(4).toString('hex')}`;
    try {
      fs.renameSync(this.lockPath, away);
    } catch (error) {
      rethrowUnless(error, isSystemError);
      return; // gone: nothing of ours is left
    }
    const moved = readOwner(away);
    if (moved && moved.nonce !== owner.nonce) {
      try {
        fs.linkSync(away, this.lockPath);
      } catch (error) {
        rethrowUnless(error, isSystemError);
        // Someone holds it anew; the one we moved lost it and its assertHeld says so.
      }
    }
    removeAny(away);
  }
}

/**
 * Remove a lock whose owner is provably gone (repair's sweep): moved aside
 * first, and put back if it turns out to be another's. True when removed.
 */
export function removeAbandonedLock(lock: string): boolean {
  const holder = readOwner(lock);
  if (!holder || !ownerGone(holder)) return false;
  const grave = `${lock}.stale-${randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(lock, grave);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return false;
  }
  const moved = readOwner(grave);
  if (moved && moved.nonce !== holder.nonce) {
    try {
      fs.linkSync(grave, lock);
    } catch (error) {
      rethrowUnless(error, isSystemError);
      // Taken anew meanwhile.
    }
    removeAny(grave);
    return false;
  }
  removeAny(grave);
  return true;
}
