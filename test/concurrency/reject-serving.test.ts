import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {verify} from '../../src/core/common/verify.js';
import {runCli} from '../helpers/cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {paused, start} from '../helpers/paused-cli.js';
import {tempDir} from '../helpers/tree.js';

/**
 * A rejection racing what would make its bundle serve: a promotion, or a
 * transition to SHADOW or CANARY. Whoever wins, the rejected bundle never
 * serves, the tree verifies, and the loser answers with its documented code:
 * promote CAS_LOST (exit 6) or NOT_CONFIRMED (exit 2), never INTEGRITY (a
 * rejection half written is decided under the lock, where it is whole).
 */
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

let base: Tree;
let b = '';
/** b confirmed, named v2, in SHADOW. */
let shadowTree = '';
beforeAll(() => {
  base = makeTree();
  dirs.push(base.dir);
  b = base.propose('b', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  expect(base.cli(['confirm', b, ...evalArgs()], fakeEnv(base.dir)).json.status).toBe('confirmed');
  shadowTree = path.join(base.dir, 'shadow', 'knowledge');
  fs.cpSync(base.knowledge, shadowTree, {recursive: true});
  for (const args of [
    ['release', 'name', 'v2', b],
    ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 's'],
  ])
    expect(runCli([...args, '--knowledge', shadowTree, '--json']).status).toBe(0);
}, 120_000);

function fresh(from: string): string {
  const dir = tempDir('autoctx-reject-race-');
  dirs.push(dir);
  const k = path.join(dir, 'knowledge');
  fs.cpSync(from, k, {recursive: true});
  return k;
}

const json = (k: string, rel: string) => JSON.parse(fs.readFileSync(path.join(k, 'demo/context_bundles', rel), 'utf8'));
const errors = (k: string) => verify({knowledge: k}).errors.map((e) => `${e.code} ${e.file}`);
const serves = (k: string) => {
  const r = runCli(['route', '--user', 'u', '--knowledge', k, '--json']).json;
  return r.bundle_digest === b || json(k, 'active.json').bundle_digest === b;
};

describe('reject against promote', () => {
  it('forced: promote read the record before a rejection, and reads its negative ' +
    'result while the rejection is half written: CAS_LOST, not INTEGRITY', async () => {
    const k = fresh(base.knowledge);
    const p = await paused(k, ['promote', b], 'promote:record-read');
    // holds the lock, the record not yet rejected
    const j = await paused(k, ['reject', b, '--rationale', 'race'], 'rejection:negative-written');
    p.resume();
    j.resume();
    const [pr, jr] = await Promise.all([p.done, j.done]);
    expect(jr.status).toBe(0);
    expect([pr.status, pr.json.error.code]).toEqual([6, 'CAS_LOST']);
    expect(json(k, `candidates/${b}/record.json`).lifecycle).toBe('rejected');
    expect(json(k, 'active.json').bundle_digest).toBe(base.baseline);
    expect(errors(k)).toEqual([]);
  }, 60_000);

  it('unforced, 8 times: one wins, the other answers with its documented code, and the tree verifies', async () => {
    const answers: string[] = [];
    for (let i = 0; i < 8; i++) {
      const k = fresh(base.knowledge);
      const [pr, jr] = await Promise.all([
        start(k, ['promote', b]).done,
        start(k, ['reject', b, '--rationale', 'race']).done,
      ]);
      expect([i, errors(k), pr.stderr, jr.stderr]).toEqual([i, [], '', '']);
      const promoted = json(k, 'active.json').bundle_digest === b;
      if (promoted)
        expect([pr.status, jr.status, jr.json.error.code, json(k, `candidates/${b}/record.json`).lifecycle]).toEqual([
          0,
          2,
          'INVALID_TRANSITION',
          'active',
        ]);
      else {
        expect([jr.status, json(k, `candidates/${b}/record.json`).lifecycle]).toEqual([0, 'rejected']);
        expect([
          [6, 'CAS_LOST'],
          [2, 'NOT_CONFIRMED'],
        ]).toContainEqual([pr.status, pr.json.error.code]);
      }
      answers.push(promoted ? 'promoted' : pr.json.error.code);
    }
    process.stdout.write(`reject against promote: ${answers.join(', ')}\n`);
  }, 60_000);
});

describe('reject against a transition that would make the bundle serve', () => {
  it('forced, to CANARY: the rejection RETIRES the SHADOW first, ' +
    'and the transition decided before it is blocked under the lock', async () => {
    const k = fresh(shadowTree);
    const tr = await paused(
      k,
      ['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '100', '--rationale', 'all'],
      'transition:before-commit',
    );
    expect(runCli(['reject', b, '--rationale', 'race', '--knowledge', k, '--json']).status).toBe(0);
    tr.resume();
    const r = await tr.done;
    expect([r.status, r.json.status, r.json.blockers.map((x: {code: string}) => x.code)]).toEqual([
      3,
      'blocked',
      ['CANDIDATE_REJECTED', 'ILLEGAL_STATE_TRANSITION'],
    ]);
    expect(serves(k)).toBe(false);
    expect(errors(k)).toEqual([]);
  }, 60_000);

  it('forced, DRAFT to SHADOW: a transition decided before the ' +
    'rejection is blocked under the lock (CANDIDATE_REJECTED)', async () => {
    const k = fresh(base.knowledge);
    expect(runCli(['release', 'name', 'v2', b, '--knowledge', k, '--json']).status).toBe(0);
    const tr = await paused(
      k,
      ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 's'],
      'transition:before-commit',
    );
    expect(runCli(['reject', b, '--rationale', 'race', '--knowledge', k, '--json']).status).toBe(0);
    tr.resume();
    const r = await tr.done;
    expect([r.status, r.json.blockers.map((x: {code: string}) => x.code)]).toEqual([3, ['CANDIDATE_REJECTED']]);
    expect(errors(k)).toEqual([]);
  }, 60_000);

  it('unforced, 8 times: whichever goes first, the rejected ' +
    'bundle is never a CANARY and nobody is routed to it', async () => {
    for (let i = 0; i < 8; i++) {
      const k = fresh(shadowTree);
      const [tr, jr] = await Promise.all([
        start(k, ['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '100', '--rationale', 'all'])
          .done,
        start(k, ['reject', b, '--rationale', 'race']).done,
      ]);
      const state = runCli(['release', 'list', '--knowledge', k, '--json']).json.scopes[0].releases.find(
        (r: {version: string}) => r.version === 'v2',
      ).state;
      expect({
        i,
        reject: jr.status,
        transition: [0, 3].includes(tr.status!) ? 'ok' : tr.stdout + tr.stderr,
        serves: serves(k),
        canary: state === 'CANARY',
        errors: errors(k),
      }).toEqual({i, reject: 0, transition: 'ok', serves: false, canary: false, errors: []});
    }
  }, 60_000);
});
