import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCli, runCliProcess} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {AUDIT, evalArgs, fakeEnv, useTrees, type Tree} from '../helpers/pipeline.js';
import {copySampleKnowledge, tempDir, treeHash} from '../helpers/tree.js';

const tree = useTrees();
const CANDIDATE = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const confirmed = (t: Tree, name = 'cand', files = CANDIDATE, extra: string[] = []) => {
  const c = t.propose(name, files);
  const r = t.cli(['confirm', c, ...evalArgs(extra)], fakeEnv(t.dir));
  expect(r.json.status).toBe('confirmed');
  return c;
};

describe('end to end, as a user runs it', () => {
  it('init → propose → confirm → promote → rollback with the example evaluator, through bin/run.js', () => {
    const dir = tempDir();
    const k = path.join(dir, 'knowledge');
    const ex = (p: string) => path.join(PROJECT_ROOT, 'knowledge-example', p);
    const run = (args: string[]) => runCliProcess([...args, '--knowledge', k, '--json']);
    expect(run(['init', '--scenario', 'demo', '--from', ex('demo/baseline')]).status).toBe(0);
    const p = run(['propose', '--from', ex('demo/candidate-better')]);
    const c = run([
      'confirm',
      p.json.bundle_digest.slice(0, 10),
      '--evaluator',
      `node ${ex('evaluator.js')}`,
      '--fixtures',
      ex('demo/fixtures.jsonl'),
      '--quiet',
    ]);
    expect(c.status).toBe(0);
    expect(c.json.status).toBe('confirmed');
    const promoted = run(['promote', p.json.bundle_digest]);
    expect(promoted.status).toBe(0);
    expect(resultSchemaProblem('result-promote', promoted.json)).toBeNull();
    expect(run(['status']).json.scenarios[0].active.bundle_digest).toBe(p.json.bundle_digest);
    expect(fs.readFileSync(path.join(k, 'demo/playbook.md'), 'utf8')).toContain('full disk');
    const rolled = run(['rollback', '--rationale', 'back', '--expect-active', p.json.bundle_digest]);
    expect(rolled.json.bundle_digest).toBe(p.json.parent_digest);
    expect(run(['verify']).json).toMatchObject({status: 'ok', errors: []});
    fs.rmSync(dir, {recursive: true, force: true});
  });
});

describe('promote', () => {
  // What promote writes, and the stale parent's rejection, are tested on the library (test/core/promote.test.ts);
  // here, through the CLI, its JSON and the exit code of a stale parent (6).
  it('prints its result as JSON, and a stale parent after a sibling wins is exit 6 (ACTIVE_MOVED)', () => {
    const t = tree();
    const a = confirmed(t, 'a');
    const b = confirmed(t, 'b', {
      'playbook/playbook.md': 'Another idea.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    const r = t.cli(['promote', a]);
    expect(r.status).toBe(0);
    expect(resultSchemaProblem('result-promote', r.json)).toBeNull();
    expect(r.json).toMatchObject({status: 'promoted', bundle_digest: a, already_promoted: false});
    const stale = t.cli(['promote', b]);
    expect(stale.status).toBe(6);
    expect(stale.json.error.code).toBe('ACTIVE_MOVED');
    expect(stale.json.error.message).toMatch(/active bundle is/);
  });

  it.each([
    ['dag_changes', '{"model_competitor": "small", "dag_changes": ["reorder"]}'],
    ['an unknown routing key', '{"model_competitor": "small", "temperature": 2}'],
    ['a construction-bound change', '{"model_competitor": "small", "judge_model": "other"}'],
  ])('refuses to serve %s; the candidate stays confirmed and the pointer unchanged', (_n, roles) => {
    const t = tree();
    const c = confirmed(t, 'routing', {'playbook/playbook.md': 'Be helpful.\n', 'routing_config/roles.json': roles});
    const before = treeHash(t.knowledge);
    const r = t.cli(['promote', c]);
    expect(r.status).toBe(2);
    expect(r.json.error.code).toBe('NOT_SERVEABLE');
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it(
    'a tampered record comparison is refused (exit 8), ' + 'active.json unchanged byte for byte, and verify catches it',
    () => {
      const t = tree();
      const c = confirmed(t);
      const file = t.file(`candidates/${c}/record.json`);
      const record = JSON.parse(fs.readFileSync(file, 'utf8'));
      record.comparison.confidence_low = record.comparison.confidence_low / 2;
      fs.writeFileSync(file, JSON.stringify(record));
      const pointer = t.read('active.json');
      const r = t.cli(['promote', c]);
      expect(r.status).toBe(8);
      expect(r.json.error.code).toBe('REPLAY_MISMATCH');
      expect(t.read('active.json')).toBe(pointer);
      const v = t.cli(['verify']);
      expect(v.status).toBe(8);
      expect(v.json.errors.map((e: {code: string}) => e.code)).toContain('REPLAY_MISMATCH');
      const replay = t.cli(['replay', c]);
      expect(replay.status).toBe(8);
      expect(replay.json.status).toBe('mismatch');
    },
  );

  it('an audit hold cannot be skipped by leaving --audit out; a different audit is refused; advisory promotes', () => {
    const t = tree();
    const log = path.join(t.dir, 'audit.log');
    const c = confirmed(t, 'audited', CANDIDATE, ['--audit', `node ${AUDIT}`]);
    const before = treeHash(t.knowledge);
    for (const env of [{FAKE_AUDIT: 'review_required'}, {FAKE_AUDIT: 'safe_pause_recommended'}, {FAKE_AUDIT: 'fail'}]) {
      const r = t.cli(['promote', c], {...env, FAKE_AUDIT_LOG: log});
      expect([r.status, r.json.error.code]).toEqual([5, 'AUDIT_HOLD']);
    }
    expect(treeHash(t.knowledge)).toBe(before);
    expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toEqual([
      'pre_promotion',
      'pre_promotion',
      'pre_promotion',
    ]);
    const other = t.cli(['promote', c, '--audit', 'true']);
    expect([other.status, other.json.error.code]).toEqual([8, 'AUDIT_CHANGED']);
    // Deleting the plan that binds the audit does not drop the audit: verify names the plan, promote refuses.
    const planFile = t.file(`candidates/${c}/evaluator_plan.json`);
    const plan = fs.readFileSync(planFile);
    fs.rmSync(planFile);
    expect(
      t.cli(['verify']).json.errors.map((e: {code: string; file: string}) => `${e.code} ${path.basename(e.file)}`),
    ).toEqual(expect.arrayContaining(['MISSING_PLAN evaluator_plan.json']));
    const unbound = t.cli(['promote', c], {FAKE_AUDIT: 'advisory', FAKE_AUDIT_LOG: log});
    expect([unbound.status, unbound.json.error.code]).toEqual([8, 'INTEGRITY']);
    fs.writeFileSync(planFile, plan);
    expect(t.cli(['promote', c], {FAKE_AUDIT: 'advisory'}).json.status).toBe('promoted');
  });

  it('refuses a candidate that is not confirmed', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const r = t.cli(['promote', c]);
    expect([r.status, r.json.error.code]).toEqual([2, 'NOT_CONFIRMED']);
  });
});

describe('reject and replay', () => {
  it('reject abandons a candidate with a negative result; the active bundle cannot be rejected', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const r = t.cli(['reject', c, '--rationale', 'not needed']);
    expect(r.json).toMatchObject({status: 'rejected', already_rejected: false});
    expect(resultSchemaProblem('result-reject', r.json)).toBeNull();
    expect(JSON.parse(t.read(`candidates/${c}/negative_result.json`)).entries[0].reason).toBe(
      'rejected by hand: not needed',
    );
    expect(t.cli(['reject', c, '--rationale', 'again']).json.already_rejected).toBe(true);
    expect(t.cli(['reject', t.baseline, '--rationale', 'x']).json.error.code).toBe('INVALID_TRANSITION');
  });

  it.each([['6d9bc734'], ['28c6b3dd']])(
    'replays the comparison the Python implementation recorded for %s bit for bit',
    (prefix) => {
      const k = copySampleKnowledge();
      const r = runCli(['replay', prefix, '--knowledge', k, '--json']);
      expect(r.status).toBe(0);
      expect(resultSchemaProblem('result-replay', r.json)).toBeNull();
      expect(r.json).toMatchObject({status: 'ok', bit_exact: true, max_ulp: 0});
      fs.rmSync(path.dirname(k), {recursive: true, force: true});
    },
  );
});
