import {spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {processStartTime, StoreLock} from '../../src/store/files/lock.js';
import {tempDir} from '../helpers/tree.js';

// The lock's owner exists from the moment the lock does; a lock is taken over only
// when its owner is provably gone or its heartbeat is past the stale time; only its owner releases it.
let dir: string;
const lockFile = () => path.join(dir, 'autoctx.lock');
const target = () => path.join(dir, 'autoctx');
const STALE = '2000';

beforeEach(() => {
  dir = tempDir('autoctx-lock-');
  process.env.AUTOCTX_LOCK_STALE_MS = STALE;
});
afterEach(() => {
  delete process.env.AUTOCTX_LOCK_STALE_MS;
  fs.rmSync(dir, {recursive: true, force: true});
});

/** A process that takes the lock, says "held", and on "check" reports whether it still holds it, then releases. */
function holder(): {child: ChildProcess; lines: string[]; next: () => Promise<string>; send: (line: string) => void} {
  const script =
    `
    const {StoreLock} = await import(${JSON.stringify(path.resolve('dist/store/files/lock.js'))});
    const l = new StoreLock(${JSON.stringify(target())}, ${JSON.stringify(lockFile())});
    await l.acquire({timeoutSeconds: 5});
    process.stdout.write('held\\n');
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', async () => {
      try { l.assertHeld(); process.stdout.write('still-held\\n'); } catch (e) { ` +
    `process.stdout.write('lost ' + e.code + '\\n'); }
      await l.releaseLock();
      process.stdout.write('released\\n');
      process.exit(0);
    });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: {...process.env, AUTOCTX_LOCK_STALE_MS: STALE},
  });
  const lines: string[] = [];
  const waiters: Array<(l: string) => void> = [];
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const w = waiters.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  return {
    child,
    lines,
    next: () => (lines.length > 0 ? Promise.resolve(lines.shift()!) : new Promise((resolve) => waiters.push(resolve))),
    send: (line) => child.stdin!.write(`${line}\n`),
  };
}
const exited = (c: ChildProcess) =>
  new Promise((resolve) => (c.exitCode !== null ? resolve(c.exitCode) : c.on('exit', resolve)));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('lock takeover, with SIGSTOP-frozen holders', () => {
  it('a holder frozen past the stale time is taken over; on waking it finds ' +
    "out before writing, and its release leaves the new holder's lock", async () => {
    const h = holder();
    expect(await h.next()).toBe('held');
    h.child.kill('SIGSTOP');
    const taker = new StoreLock(target(), lockFile());
    const started = Date.now();
    await taker.acquire({timeoutSeconds: 10});
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500); // only once the heartbeat lapsed
    h.child.kill('SIGCONT');
    h.send('check');
    expect(await h.next()).toBe('lost LOCK_LOST');
    expect(await h.next()).toBe('released');
    await exited(h.child);
    taker.assertHeld(); // the stale holder's release did not remove it
    expect(JSON.parse(fs.readFileSync(lockFile(), 'utf8')).pid).toBe(process.pid);
    await taker.releaseLock();
    expect(fs.readdirSync(dir)).toEqual([]);
  }, 20_000);

  it('a frozen holder whose heartbeat is fresh is not taken over: the waiter gives up with LOCKED', async () => {
    const h = holder();
    expect(await h.next()).toBe('held');
    h.child.kill('SIGSTOP');
    await expect(new StoreLock(target(), lockFile()).acquire({timeoutSeconds: 0.5})).rejects.toMatchObject({
      code: 'LOCKED',
      exitCode: 7,
    });
    h.child.kill('SIGCONT');
    h.send('check');
    expect(await h.next()).toBe('still-held');
    await exited(h.child);
  }, 20_000);

  it("a SIGKILLed holder's lock is taken over at once; a prepared owner file it left is no lock", async () => {
    const h = holder();
    expect(await h.next()).toBe('held');
    h.child.kill('SIGKILL');
    await exited(h.child);
    fs.writeFileSync(path.join(dir, 'autoctx.lock.owner-0123abcd.tmp'), '{"pid":1}');
    const l = new StoreLock(target(), lockFile());
    const started = Date.now();
    await l.acquire({timeoutSeconds: 0});
    expect(Date.now() - started).toBeLessThan(1000);
    await l.releaseLock();
  }, 20_000);

  it(
    'a live pid is the owner only with its start time: a reused ' + 'pid is taken over at once, the real owner is not',
    async () => {
      const mine = {
        pid: process.pid,
        hostname: os.hostname(),
        boot_id: fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
        nonce: 'n',
        acquired_at: 'x',
      };
      fs.writeFileSync(lockFile(), JSON.stringify({...mine, start_time: '1'}));
      const l = new StoreLock(target(), lockFile());
      await l.acquire({timeoutSeconds: 0});
      await l.releaseLock();
      fs.writeFileSync(lockFile(), JSON.stringify({...mine, start_time: processStartTime(process.pid)}));
      await expect(new StoreLock(target(), lockFile()).acquire({timeoutSeconds: 0.3})).rejects.toMatchObject({
        code: 'LOCKED',
      });
      // From another boot, the same pid is gone.
      fs.writeFileSync(
        lockFile(),
        JSON.stringify({...mine, boot_id: 'another-boot', start_time: processStartTime(process.pid)}),
      );
      const m = new StoreLock(target(), lockFile());
      await m.acquire({timeoutSeconds: 0});
      await m.releaseLock();
    },
  );

  it('a lock from another host is judged only by its heartbeat', async () => {
    fs.writeFileSync(
      lockFile(),
      JSON.stringify({
        pid: 999999,
        hostname: 'elsewhere',
        boot_id: null,
        start_time: null,
        nonce: 'n',
        acquired_at: 'x',
      }),
    );
    await expect(new StoreLock(target(), lockFile()).acquire({timeoutSeconds: 0.3})).rejects.toMatchObject({
      code: 'LOCKED',
    });
    const old = new Date(Date.now() - 5000);
    fs.utimesSync(lockFile(), old, old);
    const l = new StoreLock(target(), lockFile());
    await l.acquire({timeoutSeconds: 0});
    await l.releaseLock();
  });

  it("an older autoctx's lock folder is respected while its owner lives, and taken over once it is gone", async () => {
    fs.mkdirSync(lockFile());
    fs.writeFileSync(
      path.join(lockFile(), 'owner.json'),
      JSON.stringify({pid: process.pid, hostname: os.hostname(), nonce: 'old', acquired_at: 'x'}),
    );
    await expect(new StoreLock(target(), lockFile()).acquire({timeoutSeconds: 0.3})).rejects.toMatchObject({
      code: 'LOCKED',
    });
    fs.writeFileSync(
      path.join(lockFile(), 'owner.json'),
      JSON.stringify({pid: 999999, hostname: os.hostname(), nonce: 'old', acquired_at: 'x'}),
    );
    const l = new StoreLock(target(), lockFile());
    await l.acquire({timeoutSeconds: 0});
    expect(fs.statSync(lockFile()).isFile()).toBe(true);
    await l.releaseLock();
  });

  it('two processes racing for a lock never both hold it', async () => {
    // Each of 4 processes takes the lock 25 times and, while holding it, checks that no one else does.
    const script = `
      const fs = await import('node:fs');
      const {StoreLock} = await import(${JSON.stringify(path.resolve('dist/store/files/lock.js'))});
      const mark = ${JSON.stringify(path.join(dir, 'inside'))};
      let overlaps = 0;
      for (let i = 0; i < 25; i++) {
        const l = new StoreLock(${JSON.stringify(target())}, ${JSON.stringify(lockFile())});
        await l.acquire({timeoutSeconds: 30});
        try { fs.mkdirSync(mark); } catch { overlaps++; }
        await new Promise((r) => setTimeout(r, 2));
        fs.rmSync(mark, {recursive: true, force: true});
        await l.releaseLock();
      }
      process.stdout.write(String(overlaps));
    `;
    const runs = Array.from({length: 4}, () => {
      const c = spawn(process.execPath, ['--input-type=module', '-e', script], {stdio: ['ignore', 'pipe', 'inherit']});
      let out = '';
      c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      return exited(c).then(() => Number(out));
    });
    const overlaps = await Promise.all(runs);
    expect(overlaps).toEqual([0, 0, 0, 0]);
    await sleep(0);
  }, 60_000);
});
