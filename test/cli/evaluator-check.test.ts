import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from '@jest/globals';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCli} from '../helpers/cli.js';
import {FAKE, FIXTURES_12, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {treeHash} from '../helpers/tree.js';

// Try an evaluator before binding it, on the active bundle against itself; nothing written, nothing bound.
const trees: Tree[] = [];
afterEach(() => trees.splice(0).forEach((t) => fs.rmSync(t.dir, {recursive: true, force: true})));
function fresh(): Tree {
  const t = makeTree();
  trees.push(t);
  return t;
}
const check = (t: Tree, args: string[], json = true) =>
  runCli(['evaluator', 'check', ...args, '--knowledge', t.knowledge, ...(json ? ['--json'] : [])], {
    env: {...fakeEnv(t.dir), NO_COLOR: '1'},
  });

describe('autoctx evaluator check', () => {
  it(
    'runs pairs of the active bundle against itself, shows every ' + 'request and answer, and writes and binds nothing',
    () => {
      const t = fresh();
      const c = t.propose('c', {'playbook/playbook.md': 'A candidate nobody may score outside its plan.\n'});
      const before = treeHash(t.knowledge);
      const r = check(t, ['--evaluator', `node ${FAKE}`, '--fixtures', FIXTURES_12, '--pairs', '3']);
      expect(r.status).toBe(0);
      expect(resultSchemaProblem('result-evaluator-check', r.json)).toBeNull();
      const active = JSON.parse(fs.readFileSync(t.file('active.json'), 'utf8')).bundle_digest;
      expect(r.json).toMatchObject({status: 'ok', bundle_digest: active, pairs: 3});
      expect(r.json.exchanges).toHaveLength(6);
      // Both arms are the active bundle: the candidate is never scored.
      for (const x of r.json.exchanges) {
        expect(x.request.bundle_digest).toBe(active);
        expect(x.request.bundle_digest).not.toBe(c);
        expect(x.answer).toEqual({score: expect.any(Number), valid: true});
        expect(fs.existsSync(x.request.bundle_dir)).toBe(false); // the scratch copies are gone
      }
      expect(r.json.exchanges.map((x: {request: {arm: string}}) => x.request.arm)).toEqual([
        'candidate',
        'incumbent',
        'incumbent',
        'candidate',
        'candidate',
        'incumbent',
      ]);
      expect(treeHash(t.knowledge)).toBe(before);
      expect(fs.existsSync(t.file(`candidates/${c}/evaluator_plan.json`))).toBe(false);
    },
  );

  it('a failing evaluator: exit 8 at the first request, with the error and its stderr, and nothing written', () => {
    const t = fresh();
    const before = treeHash(t.knowledge);
    const r = check(t, ['--evaluator', `nod ${FAKE}`, '--fixtures', FIXTURES_12]);
    expect(r.status).toBe(8);
    expect(r.json.status).toBe('failed');
    expect(r.json.exchanges).toHaveLength(1);
    expect(r.json.exchanges[0].error).toMatchObject({
      code: 'EVALUATOR_FAILED',
      message: expect.stringContaining('nod: not found'),
      stderr_tail: [expect.stringContaining('nod: not found')],
    });
    const human = check(t, ['--evaluator', `nod ${FAKE}`, '--fixtures', FIXTURES_12], false);
    expect(human.stdout).toMatch(/^failed candidate /m);
    expect(human.stdout).toContain('  | sh: 1: nod: not found');
    expect(human.stdout).toContain('nothing was written or bound');
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it('bad flags are refused before anything runs', () => {
    const t = fresh();
    const before = treeHash(t.knowledge);
    const r = check(t, ['--evaluator', `node ${FAKE}`, '--fixtures', FIXTURES_12, '--pairs', '21']);
    expect([r.status, r.json.error.code]).toEqual([2, 'USAGE']);
    const missing = check(t, ['--evaluator', `node ${FAKE}`, '--fixtures', path.join(t.dir, 'nope.jsonl')]);
    expect([missing.status, missing.json.error.code]).toEqual([2, 'INPUT_NOT_FOUND']);
    expect(treeHash(t.knowledge)).toBe(before);
  });
});
