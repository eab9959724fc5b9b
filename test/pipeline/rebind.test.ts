import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {FAKE, FIXTURES_12, POLICY_SMALL, evalArgs, fakeEnv, useTrees, type Tree} from '../helpers/pipeline.js';
import {treeHash} from '../helpers/tree.js';

// An evaluator mistake is not a dead end. While nothing has been observed under the bound plan,
// --rebind binds another in its place, keeping the old one; once a trial is recorded the binding is final.
const tree = useTrees();
const PLAN = ['--fixtures', FIXTURES_12, '--policy', POLICY_SMALL];
const B = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const withEvaluator = (args: string[], command: string) =>
  args.map((x, i, all) => (all[i - 1] === '--evaluator' ? command : x));

function typoed(): {t: Tree; c: string; oldPlan: string; oldBytes: string} {
  const t = tree();
  const c = t.propose('c', B);
  // A typo: the command does not exist. The plan is bound before the first pair, and nothing is recorded.
  const r = t.cli(['confirm', c, ...withEvaluator(evalArgs([], false), `nod ${FAKE}`)], fakeEnv(t.dir));
  expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_FAILED']);
  const planFile = t.file(`candidates/${c}/evaluator_plan.json`);
  const oldBytes = fs.readFileSync(planFile, 'utf8');
  return {t, c, oldPlan: JSON.parse(oldBytes).plan_digest, oldBytes};
}

describe('rebinding an evaluator', () => {
  it(
    'after a typo: the mended command is refused as another ' +
      'evaluator, and --rebind binds it, keeping the old plan',
    () => {
      const {t, c, oldPlan, oldBytes} = typoed();
      const before = treeHash(t.knowledge);
      const refused = t.cli(['confirm', c, ...evalArgs([], false)], fakeEnv(t.dir));
      expect([refused.status, refused.json.error.code]).toEqual([8, 'EVALUATOR_CHANGED']);
      expect(treeHash(t.knowledge)).toBe(before);

      const r = t.cli(['confirm', c, ...evalArgs(['--rebind'], false)], fakeEnv(t.dir));
      expect(r.status).toBe(0);
      expect(r.json).toMatchObject({status: 'confirmed', superseded_plan_digest: oldPlan});
      expect(r.json.plan_digest).not.toBe(oldPlan);
      // The old plan is kept byte for byte under its digest; the new one names it.
      expect(fs.readFileSync(t.file(`candidates/${c}/superseded_plans/${oldPlan}.json`), 'utf8')).toBe(oldBytes);
      const plan = JSON.parse(fs.readFileSync(t.file(`candidates/${c}/evaluator_plan.json`), 'utf8'));
      expect([plan.plan_digest, plan.additions.supersedes]).toEqual([r.json.plan_digest, [oldPlan]]);
      expect(t.cli(['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
    },
  );

  it('once a trial is recorded the binding is final: --rebind is PLAN_CHANGED, exit 8, and nothing changes', () => {
    const t = tree();
    const c = t.propose('c', B);
    expect(t.cli(['screen', c, ...evalArgs([], false)], fakeEnv(t.dir)).json.status).toBe('screened');
    const before = treeHash(t.knowledge);
    const r = t.cli(
      ['confirm', c, ...withEvaluator(evalArgs(['--rebind'], false), `node ${FAKE} --other`)],
      fakeEnv(t.dir),
    );
    expect([r.status, r.json.error.code]).toEqual([8, 'PLAN_CHANGED']);
    expect(r.json.error.message).toMatch(
      /recorded trials? under plan [0-9a-f]{64}: once a trial is recorded the binding is final/,
    );
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it('--rebind with the plan already bound changes nothing', () => {
    const t = tree();
    const c = t.propose('c', B);
    const first = t.cli([
      'plan',
      'export',
      c,
      '--engine',
      'remote-v1',
      ...PLAN,
      '--out',
      path.join(t.dir, 'units.jsonl'),
    ]);
    expect([first.status, first.json.error]).toEqual([0, undefined]);
    const before = treeHash(t.knowledge);
    const again = t.cli([
      'plan',
      'export',
      c,
      '--engine',
      'remote-v1',
      ...PLAN,
      '--out',
      path.join(t.dir, 'units2.jsonl'),
      '--rebind',
    ]);
    expect(again.status).toBe(0);
    expect(again.json.superseded_plan_digest).toBeUndefined();
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it(
    'verify checks the history: a superseded plan that is ' +
      'missing, edited, or not named is an error naming the file',
    () => {
      const {t, c, oldPlan} = typoed();
      expect(t.cli(['confirm', c, ...evalArgs(['--rebind'], false)], fakeEnv(t.dir)).status).toBe(0);
      const kept = t.file(`candidates/${c}/superseded_plans/${oldPlan}.json`);
      const bytes = fs.readFileSync(kept);
      const rel = (f: string) => path.relative(t.knowledge, f);
      fs.rmSync(kept);
      const missing = t.cli(['verify']).json.errors.map((e: {code: string; file: string}) => [e.code, e.file]);
      expect(missing).toEqual([['PLAN_HISTORY_MISMATCH', rel(t.file(`candidates/${c}/evaluator_plan.json`))]]);
      fs.writeFileSync(kept, bytes.toString('utf8').replace('"schema_version": 1', '"schema_version": 2'));
      expect(t.cli(['verify']).json.errors.some((e: {file: string}) => e.file === rel(kept))).toBe(true);
      fs.writeFileSync(kept, bytes);
      const stray = t.file(`candidates/${c}/superseded_plans/${'e'.repeat(64)}.json`);
      fs.writeFileSync(stray, bytes);
      const errors = t.cli(['verify']).json.errors.map((e: {code: string; file: string}) => [e.code, e.file]);
      expect(errors).toContainEqual(['PLAN_HISTORY_MISMATCH', rel(stray)]);
    },
  );

  it('results brought back for a superseded plan are refused, naming the rebind', () => {
    const t = tree();
    const c = t.propose('c', B);
    const out = path.join(t.dir, 'units.jsonl');
    expect(t.cli(['plan', 'export', c, '--engine', 'remote-v1', ...PLAN, '--out', out]).status).toBe(0);
    const old = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const rebound = t.cli([
      'plan',
      'export',
      c,
      '--engine',
      'remote-v2',
      ...PLAN,
      '--out',
      path.join(t.dir, 'units2.jsonl'),
      '--rebind',
    ]);
    expect(rebound.json.superseded_plan_digest).toBe(old[0].plan_digest);
    const results = path.join(t.dir, 'results.jsonl');
    fs.writeFileSync(
      results,
      `${old
        .map((u) =>
          JSON.stringify({
            schema: 'autoctx.trial-result.v1',
            plan_digest: u.plan_digest,
            fixture_digest: u.fixture_digest,
            seed: u.seed,
            lane: u.lane,
            fixture: u.fixture,
            candidate_score: 0.9,
            incumbent_score: 0.1,
          }),
        )
        .join('\n')}\n`,
    );
    const before = treeHash(t.knowledge);
    const r = t.cli(['trials', 'ingest', c, results]);
    expect([r.status, r.json.error.code]).toEqual([2, 'INVALID_INPUT']);
    expect(r.json.error.message).toContain('which a rebind superseded');
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it('a rebind cut short after keeping the old plan: verify warns, and the same command again completes it', () => {
    const {t, c, oldPlan, oldBytes} = typoed();
    // What a crash between the two writes leaves: the old plan kept, and still bound.
    fs.mkdirSync(t.file(`candidates/${c}/superseded_plans`));
    fs.writeFileSync(t.file(`candidates/${c}/superseded_plans/${oldPlan}.json`), oldBytes);
    const v = t.cli(['verify']).json;
    expect([v.errors, v.warnings.map((w: {code: string}) => w.code)]).toEqual([[], ['REBIND_PENDING']]);
    const r = t.cli(['confirm', c, ...evalArgs(['--rebind'], false)], fakeEnv(t.dir));
    expect(r.json).toMatchObject({status: 'confirmed', superseded_plan_digest: oldPlan});
    expect(t.cli(['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
  });
});

describe('an evaluator replaced after it crashed says what changed and how to go on', () => {
  /** A script that crashes on every request, and a mended one: two files, both there. */
  function scripts(t: Tree): {crash: string; fixed: string} {
    const crash = path.join(t.dir, 'crash_eval.mjs');
    fs.writeFileSync(crash, "process.stderr.write('boom\\n');\nprocess.exit(3);\n");
    return {crash, fixed: FAKE};
  }

  it('nothing recorded: names both commands (not "gone"), suggests --rebind, which then binds it', () => {
    const t = tree();
    const c = t.propose('c', B);
    const {crash} = scripts(t);
    const crashed = t.cli(['confirm', c, ...withEvaluator(evalArgs([], false), `node ${crash}`)], fakeEnv(t.dir));
    expect([crashed.status, crashed.json.error.code]).toEqual([8, 'EVALUATOR_FAILED']);
    const before = treeHash(t.knowledge);
    const r = t.cli(['confirm', c, ...evalArgs([], false)], fakeEnv(t.dir));
    expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_CHANGED']);
    expect(r.json.error.message).toContain(
      `the evaluator is now ${JSON.stringify(`node ${FAKE}`)} (per-arm), and the plan was bound with ` +
        `${JSON.stringify(`node ${crash}`)} (per-arm)`,
    );
    expect(r.json.error.message).toContain(
      'nothing is recorded under the bound plan yet: run the same command with --rebind',
    );
    expect(r.json.error.message).not.toMatch(/gone/);
    expect(treeHash(t.knowledge)).toBe(before);
    const rebound = t.cli(['confirm', c, ...evalArgs(['--rebind'], false)], fakeEnv(t.dir));
    expect([rebound.status, rebound.json.status]).toEqual([0, 'confirmed']);
  });

  it('a trial recorded: says --rebind cannot help, and why', () => {
    const t = tree();
    const c = t.propose('c', B);
    expect(t.cli(['screen', c, ...evalArgs([], false)], fakeEnv(t.dir)).json.status).toBe('screened');
    const {crash} = scripts(t);
    const r = t.cli(['confirm', c, ...withEvaluator(evalArgs([], false), `node ${crash}`)], fakeEnv(t.dir));
    expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_CHANGED']);
    expect(r.json.error.message).toMatch(
      /--rebind cannot help: candidate [0-9a-f]{64} has \d+ recorded trials? under plan [0-9a-f]{64}/,
    );
    expect(r.json.error.message).not.toContain('run the same command with --rebind');
  });
});
