import fs from 'node:fs';
import path from 'node:path';
import {beforeEach, describe, expect, it} from '@jest/globals';
import {init} from '../../src/core/common/init.js';
import {propose} from '../../src/core/promotion/propose.js';
import {repair} from '../../src/core/common/repair.js';
import {verify} from '../../src/core/common/verify.js';
import {GITIGNORE_GENERATIONS, KnowledgeStore, STATE_DIR_MODE, STATE_FILE_MODE} from '../../src/store/index.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

let dir: string;
let knowledge: string;

beforeEach(async () => {
  dir = tempDir();
  knowledge = path.join(dir, 'knowledge');
  await init({
    knowledge,
    scenario: 'demo',
    from: writeSource(path.join(dir, 'base'), {'playbook/playbook.md': 'baseline'}),
  });
});

const mode = (p: string) => fs.statSync(p).mode & 0o777;

describe('the state area, knowledge/.state/', () => {
  it('is made 0700 with files 0600, ignores itself, and a wider mode is tightened', async () => {
    const state = KnowledgeStore.open(knowledge).state();
    fs.rmSync(state.dir, {recursive: true, force: true});
    await state.withLock(5, () =>
      state.writer.replaceDocument(state.file('receipts', 'r1.json'), 'active', {
        schema_version: 1,
        bundle_digest: 'a'.repeat(64),
        evaluator_epoch: 'e',
        promotion_id: null,
        rollback_target_digest: null,
        activated_at: '2026-12-01T00:00:00Z',
        rationale: 'probe',
      }),
    );
    expect(mode(state.dir)).toBe(STATE_DIR_MODE);
    expect(mode(path.join(state.dir, 'receipts'))).toBe(STATE_DIR_MODE);
    expect(mode(state.file('receipts', 'r1.json'))).toBe(STATE_FILE_MODE);
    expect(fs.readFileSync(path.join(state.dir, '.gitignore'), 'utf8')).toMatch(/\n\*\n$/);
    expect(mode(path.join(state.dir, '.gitignore'))).toBe(STATE_FILE_MODE);
    fs.chmodSync(state.dir, 0o755);
    await state.withLock(5, () => undefined);
    expect(mode(state.dir)).toBe(STATE_DIR_MODE);
    // No lock folder or temporary file is left behind.
    expect(fs.readdirSync(state.dir).sort()).toEqual(['.gitignore', 'receipts']);
  });

  it(
    "sweeps a killed writer's temporary files once a day, after a step " +
      'that succeeded, never in every process; repair sweeps at once',
    async () => {
      const doc = {
        schema_version: 1,
        bundle_digest: 'a'.repeat(64),
        evaluator_epoch: 'e',
        promotion_id: null,
        rollback_target_digest: null,
        activated_at: '2026-12-01T00:00:00Z',
        rationale: 'probe',
      };
      let tree = knowledge;
      // A fresh process's view of the tree (the area's housekeeping is looked at once per process): the tree under a
      // new
      // name.
      const fresh = (name: string) => {
        const next = path.join(dir, name);
        fs.renameSync(tree, next);
        tree = next;
        return KnowledgeStore.open(tree).state();
      };
      const step = (area: ReturnType<typeof fresh>) =>
        area.withLock(5, () => area.writer.replaceDocument(area.file('receipts', 'r1.json'), 'active', doc));
      const first = KnowledgeStore.open(tree).state();
      await first.withLock(5, () => first.writer.replaceDocument(first.file('elsewhere', 'e1.json'), 'active', doc));
      const marker = () => JSON.parse(fs.readFileSync(path.join(tree, '.state/housekeeping.json'), 'utf8'));
      expect(Date.now() - Date.parse(marker().swept_at)).toBeLessThan(60_000);
      // What a writer killed before its rename leaves (tempPath's name), and a .tmp file autoctx did not name.
      const leftovers = ['receipts/.r2.json.autoctx-0123abcd.tmp', 'elsewhere/.e2.json.autoctx-4567cdef.tmp'];
      const plant = () => {
        fs.mkdirSync(path.join(tree, '.state/receipts'), {recursive: true});
        for (const f of [...leftovers, 'elsewhere/notes.tmp'])
          fs.writeFileSync(path.join(tree, '.state', f), '{"partial');
      };
      const present = () =>
        [...leftovers, 'elsewhere/notes.tmp'].filter((f) => fs.existsSync(path.join(tree, '.state', f)));
      plant();
      // Swept within the day: the next process does not list the area again.
      await step(fresh('t1'));
      expect(present()).toEqual([...leftovers, 'elsewhere/notes.tmp']);
      // repair sweeps at once, and names what it removed.
      const r = await repair({knowledge: tree});
      for (const f of leftovers) expect(r.actions).toContain(`removed ${path.join('.state', f)}`);
      expect(present()).toEqual(['elsewhere/notes.tmp']);
      // A day later: the first step that succeeds sweeps everything (a failed one sweeps nothing).
      plant();
      fs.writeFileSync(
        path.join(tree, '.state/housekeeping.json'),
        JSON.stringify({schema_version: 1, swept_at: new Date(Date.now() - 25 * 3_600_000).toISOString()}),
      );
      const later = fresh('t2');
      await expect(
        later.withLock(5, () => {
          throw new Error('the step fails');
        }),
      ).rejects.toThrow('the step fails');
      expect(present()).toHaveLength(3);
      await step(later);
      expect(present()).toEqual(['elsewhere/notes.tmp']);
      expect(Date.now() - Date.parse(marker().swept_at)).toBeLessThan(60_000);
      // A marker that is not valid, or dated ahead of the clock, only makes the sweep due.
      for (const [name, text] of [
        ['t3', '{"schema_version": 1, "swept_at": "soon"'],
        ['t4', JSON.stringify({schema_version: 1, swept_at: '2099-01-01T00:00:00Z'})],
      ]) {
        plant();
        fs.writeFileSync(path.join(tree, '.state/housekeeping.json'), text!);
        await step(fresh(name!));
        expect([name, present()]).toEqual([name, ['elsewhere/notes.tmp']]);
      }
    },
  );

  it('has its own lock: a second holder waits, then gives up with LOCKED (exit 7)', async () => {
    const a = KnowledgeStore.open(knowledge).state();
    const b = KnowledgeStore.open(knowledge).state();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const first = a.withLock(5, async () => {
      inside();
      await held;
    });
    await entered;
    await expect(b.withLock(0.3, () => 'never')).rejects.toMatchObject({code: 'LOCKED', exitCode: 7});
    release();
    await first;
    await expect(b.withLock(1, () => 'now')).resolves.toBe('now');
  });

  it('refuses to write without its lock, and refuses names that are not safe segments', () => {
    const state = KnowledgeStore.open(knowledge).state();
    expect(() => state.writer.replace(state.file('x.json'), '{}')).toThrow(/without its lock/);
    expect(() => state.file('..', 'x')).toThrow(expect.objectContaining({code: 'INVALID_NAME'}));
    expect(() => state.file('a/b')).toThrow(expect.objectContaining({code: 'INVALID_NAME'}));
  });

  it('a link, or a file, in its place is refused', async () => {
    const state = KnowledgeStore.open(knowledge).state();
    fs.rmSync(state.dir, {recursive: true, force: true});
    fs.symlinkSync(tempDir(), state.dir);
    await expect(state.withLock(1, () => undefined)).rejects.toMatchObject({code: 'UNSAFE_PATH'});
    const r = verify({knowledge});
    expect(r.status).toBe('failed');
    expect(r.errors.map((e) => [e.code, e.file])).toEqual([['UNSAFE_PATH', '.state']]);
  });

  it('verify skips exactly .state/: anything in it is not read, a hidden scenario store elsewhere is an error', () => {
    const state = KnowledgeStore.open(knowledge).state();
    fs.mkdirSync(path.join(state.dir, 'context_bundles'), {recursive: true});
    fs.writeFileSync(path.join(state.dir, 'context_bundles', 'active.json'), '{not json');
    fs.writeFileSync(path.join(state.dir, 'junk.tmp'), 'x');
    expect(verify({knowledge})).toMatchObject({status: 'ok', errors: [], warnings: [], scenarios: ['demo']});
    fs.mkdirSync(path.join(knowledge, '.hidden', 'context_bundles'), {recursive: true});
    const r = verify({knowledge});
    expect(r.errors.map((e) => [e.code, e.file])).toEqual([['UNKNOWN_ENTRY', '.hidden']]);
  });

  it('scenario names that begin with "." stay refused', async () => {
    for (const scenario of ['.state', '.hidden']) {
      const before = treeHash(dir);
      await expect(init({knowledge, scenario, from: path.join(dir, 'base')})).rejects.toMatchObject({
        code: 'INVALID_NAME',
        exitCode: 2,
      });
      expect(treeHash(dir)).toBe(before);
    }
  });
});

describe('the root .gitignore', () => {
  it(
    'ignores the state area, and a rule newer than the tree is a ' +
      'warning that a writing command or repair brings up to date',
    async () => {
      const file = path.join(knowledge, '.gitignore');
      expect(fs.readFileSync(file, 'utf8').split('\n')).toContain('.state/');
      // A tree made before the state area existed: its .gitignore lacks the later generations' rules.
      const later = GITIGNORE_GENERATIONS.slice(1).flat();
      const older = fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => !later.includes(l))
        .join('\n');
      expect(older.endsWith('.false-promotion.lock\n')).toBe(true);
      fs.writeFileSync(file, older);
      const r = verify({knowledge});
      expect(r.status).toBe('ok');
      expect(r.warnings.map((w) => [w.code, w.file])).toEqual([['GITIGNORE_OUTDATED', '.gitignore']]);
      await propose({knowledge, from: writeSource(path.join(dir, 'c'), {'playbook/playbook.md': 'candidate'})});
      expect(fs.readFileSync(file, 'utf8')).toBe(`${older}${later.join('\n')}\n`);
      expect(verify({knowledge}).warnings).toEqual([]);
      fs.writeFileSync(file, older);
      await repair({knowledge});
      expect(fs.readFileSync(file, 'utf8')).toBe(`${older}${later.join('\n')}\n`);
    },
  );

  it('a first-generation rule removed by hand is an error (lock files could be committed)', () => {
    const file = path.join(knowledge, '.gitignore');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('autoctx.lock/\n', ''));
    const r = verify({knowledge});
    expect(r.status).toBe('failed');
    expect(r.errors.map((e) => [e.code, e.file])).toEqual([['GITIGNORE_INCOMPLETE', '.gitignore']]);
  });

  it('lines a person added stay where they are', async () => {
    const file = path.join(knowledge, '.gitignore');
    fs.writeFileSync(file, 'my-notes/\n*.tmp\nautoctx.lock/\nautoctx.lock.stale-*/\n.lock\n.false-promotion.lock');
    await propose({knowledge, from: writeSource(path.join(dir, 'c'), {'playbook/playbook.md': 'candidate'})});
    expect(fs.readFileSync(file, 'utf8')).toBe(
      'my-notes/\n*.tmp\nautoctx.lock/\nautoctx.lock.stale-*/\n.lock\n.false-promotion.lock\n# autoctx: ' +
        'lock and temporary files are never committed\n.state/\nautoctx.lock\nautoctx.lock.stale-*\n',
    );
  });
});
