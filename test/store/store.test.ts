import {spawn, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {RootGuard, atomicWrite, createImmutable} from '../../src/store/files/fs.js';
import {StoreLock} from '../../src/store/files/lock.js';
import {KnowledgeStore} from '../../src/store/index.js';
import {init} from '../../src/core/common/init.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';
import {activeDigest, readActive, swapActive} from '../../src/store/kinds/promotion/active-pointer.js';

let dir: string;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => fs.rmSync(dir, {recursive: true, force: true}));

describe('atomic and immutable writes', () => {
  it('atomicWrite replaces the file whole and leaves no temp file', () => {
    const guard = new RootGuard(dir);
    const file = path.join(dir, 'a', 'b.json');
    atomicWrite(guard, file, 'one');
    atomicWrite(guard, file, 'two');
    expect(fs.readFileSync(file, 'utf8')).toBe('two');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['b.json']);
  });

  it('a failing publish check aborts before the rename and removes the temp file', () => {
    const guard = new RootGuard(dir);
    const file = path.join(dir, 'x.json');
    atomicWrite(guard, file, 'old');
    expect(() =>
      atomicWrite(guard, file, 'new', {
        beforePublish: () => {
          throw new Error('lock lost');
        },
      }),
    ).toThrow('lock lost');
    expect(fs.readFileSync(file, 'utf8')).toBe('old');
    expect(fs.readdirSync(dir)).toEqual(['x.json']);
  });

  it(
    'createImmutable: equal content is a no-op, different ' + 'content is IMMUTABLE_CONFLICT and the file is untouched',
    () => {
      const guard = new RootGuard(dir);
      const file = path.join(dir, 'i.json');
      expect(createImmutable(guard, file, 'v1', () => true)).toBe(true);
      expect(createImmutable(guard, file, 'v1', (b) => b.toString() === 'v1')).toBe(false);
      expect(() => createImmutable(guard, file, 'v2', (b) => b.toString() === 'v2')).toThrow(
        expect.objectContaining({code: 'IMMUTABLE_CONFLICT', exitCode: 8}),
      );
      expect(fs.readFileSync(file, 'utf8')).toBe('v1');
      expect(fs.readdirSync(dir)).toEqual(['i.json']);
    },
  );
});

describe('path guard', () => {
  it('refuses to read or write through a symbolic link that leads outside the root', () => {
    const root = path.join(dir, 'root');
    const outside = path.join(dir, 'outside');
    fs.mkdirSync(root);
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(root, 'escape'));
    const guard = new RootGuard(root);
    expect(() => atomicWrite(guard, path.join(root, 'escape', 'f.json'), 'x')).toThrow(
      expect.objectContaining({code: 'UNSAFE_PATH'}),
    );
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(() => guard.check(path.join(root, '..', 'outside', 'f'))).toThrow(
      expect.objectContaining({code: 'UNSAFE_PATH'}),
    );
  });

  it('a scenario folder that is a link out of the root is refused, and nothing outside changes', async () => {
    const knowledge = path.join(dir, 'knowledge');
    const src = writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'x'});
    await init({knowledge, scenario: 'demo', from: src});
    const outside = path.join(dir, 'elsewhere');
    fs.cpSync(path.join(knowledge, 'demo'), outside, {recursive: true});
    fs.symlinkSync(outside, path.join(knowledge, 'evil'));
    const before = treeHash(outside);
    await expect(init({knowledge, scenario: 'evil', from: src})).rejects.toMatchObject({
      code: 'UNSAFE_PATH',
      exitCode: 8,
    });
    expect(treeHash(outside)).toBe(before);
  });
});

describe('scenario lock', () => {
  const target = () => path.join(dir, 'store');
  const lockDir = () => path.join(dir, 'autoctx.lock');

  it('a second holder waits and then fails with LOCKED (exit 7)', async () => {
    const a = new StoreLock(target(), lockDir());
    await a.acquire({timeoutSeconds: 1});
    const b = new StoreLock(target(), lockDir());
    const started = Date.now();
    await expect(b.acquire({timeoutSeconds: 0.3})).rejects.toMatchObject({code: 'LOCKED', exitCode: 7});
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    await a.releaseLock();
    await b.acquire({timeoutSeconds: 1});
    b.assertHeld();
    await b.releaseLock();
    expect(fs.existsSync(lockDir())).toBe(false);
  });

  it('a lock left by a killed process is taken over at once', async () => {
    // A child process takes the lock and is killed with SIGKILL while holding it.
    const script = `
      const {StoreLock} = await import(${JSON.stringify(path.resolve('dist/store/files/lock.js'))});
      const l = new StoreLock(${JSON.stringify(target())}, ${JSON.stringify(lockDir())});
      await l.acquire({timeoutSeconds: 5});
      process.stdout.write('held\\n');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => child.stdout.on('data', () => resolve()));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('exit', resolve));
    // The lock is its owner, published whole: pid, boot id, start time and nonce.
    expect(JSON.parse(fs.readFileSync(lockDir(), 'utf8'))).toMatchObject({
      pid: child.pid,
      nonce: expect.any(String),
      boot_id: expect.any(String),
      start_time: expect.any(String),
    });
    const l = new StoreLock(target(), lockDir());
    const started = Date.now();
    await l.acquire({timeoutSeconds: 0});
    expect(Date.now() - started).toBeLessThan(2000);
    l.assertHeld();
    await l.releaseLock();
  });

  it('a holder whose lock was taken over finds out in its synchronous check and writes nothing', async () => {
    const knowledge = path.join(dir, 'knowledge');
    const src = writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'x'});
    await init({knowledge, scenario: 'demo', from: src});
    const store = KnowledgeStore.open(knowledge).scenario('demo');
    const before = treeHash(knowledge);
    await expect(
      store.withLock(1, () => {
        // Another process takes the lock over (as after a lapsed heartbeat): the owner changes.
        fs.writeFileSync(
          store.paths.lock,
          JSON.stringify({pid: 1, hostname: os.hostname(), nonce: 'someone-else', acquired_at: 'now'}),
        );
        const active = readActive(store)!;
        swapActive(store, activeDigest(store), {...active, rationale: 'must not be written'});
      }),
    ).rejects.toMatchObject({code: 'LOCK_LOST', exitCode: 7});
    // Its release left the other holder's lock in place; apart from that lock nothing changed.
    expect(JSON.parse(fs.readFileSync(store.paths.lock, 'utf8')).nonce).toBe('someone-else');
    fs.rmSync(store.paths.lock);
    expect(treeHash(knowledge)).toBe(before);
  });
});

describe('gitignore', () => {
  it('keeps lock and temp files out of git', async () => {
    const knowledge = path.join(dir, 'knowledge');
    await init({knowledge, scenario: 'demo', from: writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'x'})});
    const git = (args: string[]) => spawnSync('git', args, {cwd: knowledge, encoding: 'utf8'});
    if (git(['init', '-q']).status !== 0) return;
    fs.writeFileSync(path.join(knowledge, 'demo/context_bundles/autoctx.lock'), '{}');
    fs.writeFileSync(path.join(knowledge, 'demo/context_bundles/autoctx.lock.stale-1a2b'), '{}');
    // an older autoctx's lock folder
    fs.mkdirSync(path.join(knowledge, 'other/context_bundles/autoctx.lock'), {recursive: true});
    fs.writeFileSync(path.join(knowledge, 'other/context_bundles/autoctx.lock/owner.json'), '{}');
    fs.writeFileSync(path.join(knowledge, 'demo/context_bundles/.active.json.autoctx-abc.tmp'), '{}');
    const listed = git(['status', '--porcelain', '--untracked-files=all']).stdout;
    expect(listed).not.toContain('autoctx.lock');
    expect(listed).not.toContain('.tmp');
    expect(listed).toContain('active.json');
  });
});
