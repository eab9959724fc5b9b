import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {repair} from '../../src/core/common/repair.js';
import {verify} from '../../src/core/common/verify.js';
import {runCliProcess} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

/**
 * A tree the previous version wrote (test/fixtures/seq-named-histories: record histories, release receipts, the
 * curation history and handoff revisions named by position) is read as it is, and `autoctx repair` renames every
 * entry to the digest of its content, losing nothing.
 */
const FIXTURE = path.join(PROJECT_ROOT, 'test/fixtures/seq-named-histories/knowledge');
const HISTORY_FOLDER = /\/(record_history|receipts\/[^/]+|curation_history|handoffs\/[^/]+)$/;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

function copy(label: string): string {
  const k = path.join(tempDir(`autoctx-names-${label}-`), 'knowledge');
  dirs.push(path.dirname(k));
  fs.cpSync(FIXTURE, k, {recursive: true});
  return k;
}

/** Every entry file of every history folder: its name, and its bytes. */
function historyEntries(knowledge: string): Array<{file: string; bytes: string}> {
  return (fs.readdirSync(knowledge, {recursive: true, withFileTypes: true}) as fs.Dirent[])
    .filter((e) => e.isFile() && e.name.endsWith('.json') && HISTORY_FOLDER.test(e.parentPath))
    .map((e) => {
      const file = path.join(e.parentPath, e.name);
      return {file: path.relative(knowledge, file), bytes: fs.readFileSync(file, 'utf8')};
    })
    .sort((a, b) => (a.file < b.file ? -1 : 1));
}

describe('history entries named by position, as the previous version wrote them', () => {
  it('are read as they are: verify is clean, and log, status, release history and handoff show answer', () => {
    const k = copy('read');
    const before = historyEntries(k);
    expect(before.length).toBeGreaterThan(10);
    expect(before.every((e) => /\/\d{6}\.json$/.test(e.file))).toBe(true);
    // That version wrote no .gitattributes yet: its only warning (repair writes it).
    const read = verify({knowledge: k});
    expect(read).toMatchObject({status: 'ok', errors: []});
    expect(read.warnings.map((w) => w.code)).toEqual(['GITATTRIBUTES_MISSING']);
    for (const args of [['log'], ['status'], ['release', 'history'], ['handoff', 'show', 'notes@2']]) {
      const r = runCliProcess([...args, '--knowledge', k, '--json']);
      expect([args.join(' '), r.status]).toEqual([args.join(' '), 0]);
    }
    const history = runCliProcess(['release', 'history', '--knowledge', k, '--json']).json;
    expect(history.receipts.map((r: {seq: number}) => r.seq)).toEqual([1, 2, 3]);
    // Reading changed nothing.
    expect(historyEntries(k)).toEqual(before);
  });

  it(
    'repair renames every entry to the digest of its content: the same ' +
      'count, the same bytes, verify clean; again, it renames nothing',
    async () => {
      const k = copy('upgrade');
      const before = historyEntries(k);
      const r = await repair({knowledge: k});
      expect(r.remaining).toEqual([]);
      expect(r.actions.filter((a) => a.includes('from their positions to their digests')).length).toBeGreaterThan(3);
      const after = historyEntries(k);
      expect(after.every((e) => /\/[0-9a-f]{64}\.json$/.test(e.file))).toBe(true);
      expect(after.map((e) => e.bytes).sort()).toEqual(before.map((e) => e.bytes).sort());
      // Each stays in its own folder.
      expect(after.map((e) => path.dirname(e.file)).sort()).toEqual(before.map((e) => path.dirname(e.file)).sort());
      expect(verify({knowledge: k})).toMatchObject({status: 'ok', errors: [], warnings: []});
      const again = await repair({knowledge: k});
      expect(again.actions.filter((a) => a.includes('to their digests'))).toEqual([]);
      const history = runCliProcess(['release', 'history', '--knowledge', k, '--json']).json;
      expect(history.receipts.map((x: {seq: number}) => x.seq)).toEqual([1, 2, 3]);
      expect(runCliProcess(['handoff', 'show', 'notes@1', '--knowledge', k, '--json']).json.handoff.content).toEqual({
        summary: 'first',
      });
    },
  );

  it(
    'a rename cut short (an entry under both names) is read ' + 'once: verify is clean, and repair completes it',
    async () => {
      const k = copy('cut-short');
      const upgraded = copy('reference');
      await repair({knowledge: upgraded});
      // The state a crash between the new name's write and the old name's removal leaves, in every folder.
      for (const e of historyEntries(upgraded)) {
        const target = path.join(k, e.file);
        if (!fs.existsSync(target)) fs.writeFileSync(target, e.bytes);
      }
      expect(historyEntries(k).length).toBe(2 * historyEntries(upgraded).length);
      const cut = verify({knowledge: k});
      expect(cut).toMatchObject({status: 'ok', errors: []});
      expect(cut.warnings.map((w) => w.code)).toEqual(['GITATTRIBUTES_MISSING']);
      await repair({knowledge: k});
      expect(historyEntries(k)).toEqual(historyEntries(upgraded));
    },
  );
});
