import fs from 'node:fs';
import {afterEach, describe, expect, it} from '@jest/globals';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCliProcess} from '../helpers/cli.js';
import {historyTree, type Tree} from '../helpers/pipeline.js';
import {treeHash} from '../helpers/tree.js';

// Log is the whole history, newest first, with --limit and --since.
const trees: Tree[] = [];
afterEach(() => trees.splice(0).forEach((t) => fs.rmSync(t.dir, {recursive: true, force: true})));

describe('autoctx log', () => {
  it(
    'lists init, proposals, decisions, promotions, rollbacks and ' +
      'rollovers, newest first; --limit and --since cut it',
    () => {
      const t = historyTree(true);
      trees.push(t);
      const log = (args: string[] = []) => runCliProcess(['log', ...args, '--knowledge', t.knowledge, '--json']).json;
      const all = log();
      expect(resultSchemaProblem('result-log', all)).toBeNull();
      const types = all.entries.map((e: {type: string}) => e.type);
      for (const type of ['init', 'proposal', 'rejection', 'promotion', 'rollback', 'rollover'])
        expect([type, types.includes(type)]).toEqual([type, true]);
      expect(types[types.length - 1]).toBe('init');
      const times = all.entries.map((e: {at: string}) => Date.parse(e.at));
      expect(times).toEqual([...times].sort((a: number, b: number) => b - a));
      // Only pointer moves say whether they served.
      for (const e of all.entries)
        expect([e.type, 'served' in e]).toEqual([e.type, ['promotion', 'rollback', 'rollover'].includes(e.type)]);
      expect(log(['--limit', '3']).entries).toEqual(all.entries.slice(0, 3));
      const middle = all.entries[Math.floor(all.entries.length / 2)].at;
      expect(log(['--since', middle]).entries).toEqual(
        all.entries.filter((e: {at: string}) => Date.parse(e.at) >= Date.parse(middle)),
      );
      expect(log(['--since', '2999-01-01']).entries).toEqual([]);
      const human = runCliProcess(['log', '--knowledge', t.knowledge, '--limit', '1'], {env: {NO_COLOR: '1'}})
        .stdout.trim()
        .split('\n');
      expect(human).toHaveLength(1);
      expect(human[0]).toMatch(
        /^\S+ {2}rollover {5}[0-9a-f]{12} -> [0-9a-f]{12} {2}evaluator epoch epoch-1 -> epoch-2 {2}\(serving\)$/,
      );
    },
  );

  it('bad --limit and --since: exit 2, one line naming the flag, nothing read or written', () => {
    const t = historyTree();
    trees.push(t);
    const before = treeHash(t.knowledge);
    for (const args of [
      ['--limit', '0'],
      ['--limit', 'x'],
      ['--since', 'yesterday'],
      ['--since', '2026-13-45'],
    ]) {
      const r = runCliProcess(['log', ...args, '--knowledge', t.knowledge]);
      expect([args, r.status, r.stderr.trim().split('\n')]).toEqual([
        args,
        2,
        [expect.stringMatching(/^error USAGE: /)],
      ]);
      expect(r.stderr).toMatch(args[0] === '--limit' ? /limit/ : /since/);
    }
    expect(treeHash(t.knowledge)).toBe(before);
  });
});
