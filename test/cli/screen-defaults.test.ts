import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCliProcess as runCli} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {FAKE, fakeEnv, useTrees, type Tree} from '../helpers/pipeline.js';
import {copySampleKnowledge, treeHash} from '../helpers/tree.js';

/** The screen (and held-out lane) of a new plan's default policy, as docs/statistics.md states it. */
const NEW_PLAN_SCREEN = 16;

interface ScreenRow {
  scores: string;
  effect_sd: number;
  screen_pairs: number;
  pass_rate: number;
  avg_pairs: number;
}

describe('calibrate: the screen rows', () => {
  it('measure false rejection for +0.25 and +0.5 SD and the clear loser, continuous and tied scores', () => {
    const r = runCli(['calibrate', '--table', 'screen', '--reps', '600', '--seed', '5', '--json']);
    expect(r.status).toBe(0);
    expect(resultSchemaProblem('result-calibrate', r.json)).toBeNull();
    const rows = r.json.screen_rows as ScreenRow[];
    const at = (scores: string, effect: number, n: number) =>
      rows.find((x) => x.scores === scores && x.effect_sd === effect && x.screen_pairs === n)!;
    const n = NEW_PLAN_SCREEN;
    for (const scores of ['continuous', 'discrete']) {
      // The reference's 2-pair screen loses a large share of +0.5 SD candidates; the new default keeps them.
      expect(at(scores, 0.5, 2).pass_rate).toBeLessThan(0.8);
      expect(at(scores, 0.5, n).pass_rate).toBeGreaterThanOrEqual(0.94);
      expect(at(scores, 0.25, n).pass_rate).toBeGreaterThan(at(scores, 0.25, 2).pass_rate);
      // The clear loser is still screened out, at the cost of the screen alone.
      expect(at(scores, -0.5, n).pass_rate).toBeLessThan(0.05);
      expect(at(scores, -0.5, n).avg_pairs).toBeLessThan(n + 1.5);
    }
    expect(r.stdout).not.toContain('screen:'); // --json prints one object
  });

  it('prints the screen and sizing tables in text, naming the default', () => {
    const r = runCli(['calibrate', '--table', 'screen', '--reps', '50']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^screen: share of candidates passing the screen/m);
    expect(r.stdout).toMatch(/^discrete +\+0\.50 SD/m);
    expect(r.stdout).toContain(`new plans screen ${NEW_PLAN_SCREEN} pairs`);
    const s = runCli(['calibrate', '--table', 'sizing', '--reps', '30', '--json']);
    expect(s.status).toBe(0);
    expect(s.json.rows).toEqual([]);
    expect(s.json.sizing_rows.length).toBeGreaterThan(8);
  });
});

const EXAMPLE_FIXTURES = path.join(PROJECT_ROOT, 'knowledge-example/demo/fixtures.jsonl');
const laneFixtures = (t: Tree, digest: string, lane: string) =>
  (JSON.parse(t.read(`candidates/${digest}/evaluator_plan.json`)).plan.units as Array<{lane: string; fixture: string}>)
    .filter((u) => u.lane === lane)
    .map((u) => u.fixture)
    .sort();

describe('a new plan without a policy', () => {
  const trees = useTrees();

  it('screens 16 pairs and holds out 16, on fixtures drawn by its cohort; a rejection says how to try again', () => {
    const t = trees();
    const worse = t.propose('worse', {'playbook/playbook.md': 'Be curt.\n'}, 'run-a');
    const other = t.propose('other', {'playbook/playbook.md': 'Be terse.\n'}, 'run-b');
    const args = ['--evaluator', `node ${FAKE}`, '--evaluator-mode', 'persistent', '--fixtures', EXAMPLE_FIXTURES];
    const env = cliEnvOf(t, {FAKE_DELTA: '-0.3'});
    const r = runCli(['screen', worse, ...args, '--quiet', '--knowledge', t.knowledge], {env});
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(/^rejected .*candidate failed the cheap matched screen/m);
    expect(r.stdout).toContain('pairs: screen 16,');
    expect(r.stdout).toContain(`${worse.slice(0, 12)} stays rejected with this evidence; it is not evaluated again.`);
    expect(r.stdout).toMatch(/To try the idea again, propose a changed variant/);
    // The same command again reports the same decision: the evidence is never reset.
    const again = t.cli(['screen', worse, ...args, '--quiet'], env);
    expect([again.status, again.json.comparison.screen_pairs, again.json.pairs_evaluated]).toEqual([3, 16, 0]);
    // Each candidate's screen fixtures are drawn by its cohort: not the same first 16 for every candidate.
    const s = t.cli(['screen', other, ...args, '--quiet'], env);
    expect(s.json.comparison.screen_pairs).toBe(16);
    expect(laneFixtures(t, worse, 'screen')).toHaveLength(16);
    expect(laneFixtures(t, other, 'screen')).toHaveLength(16);
    expect(laneFixtures(t, worse, 'screen')).not.toEqual(laneFixtures(t, other, 'screen'));
    expect(laneFixtures(t, worse, 'heldout')).toHaveLength(16);
  });

  it('with several seeds per fixture, screens as many fixtures as pairs (each first seed before any second)', () => {
    const t = trees();
    const c = t.propose('cand', {'playbook/playbook.md': 'Be brief.\n'});
    const args = ['--evaluator', `node ${FAKE}`, '--evaluator-mode', 'persistent', '--fixtures', EXAMPLE_FIXTURES];
    const r = t.cli(['screen', c, ...args, '--seeds-per-fixture', '2', '--quiet'], fakeEnv(t.dir, {FAKE_DELTA: '0.3'}));
    expect([r.status, r.json.comparison.screen_pairs]).toEqual([0, 16]);
    const trials = JSON.parse(t.read(`candidates/${c}/matched_trials.json`)).trials as Array<{fixture_digest: string}>;
    expect(new Set(trials.map((x) => x.fixture_digest)).size).toBe(16);
  });

  it('PLAN_UNREACHABLE names the fixtures, seeds or max_confirmation_pairs that would reach a decision', () => {
    const t = trees();
    const c = t.propose('cand', {'playbook/playbook.md': 'Be kind.\n'});
    const first = (n: number) => {
      const file = path.join(t.dir, `first-${n}.jsonl`);
      fs.writeFileSync(file, fs.readFileSync(EXAMPLE_FIXTURES, 'utf8').split('\n').slice(0, n).join('\n'));
      return file;
    };
    const before = treeHash(t.knowledge);
    const r = t.cli(['confirm', c, '--evaluator', `node ${FAKE}`, '--fixtures', first(44), '--quiet']);
    expect([r.status, r.json.error.code]).toEqual([2, 'PLAN_UNREACHABLE']);
    expect(r.json.error.message).toContain('confirmation lacks 8 (needs 20 units, has 12)');
    expect(r.json.error.message).toContain('give at least 52 fixtures (you gave 44)');
    expect(r.json.error.message).toContain('--seeds-per-fixture 2');
    expect(r.json.error.message).toContain('"max_confirmation_pairs": 12');
    // The case: a wider screen asked for by hand.
    const six = path.join(t.dir, 'six.json');
    fs.writeFileSync(six, '{"min_screen_pairs": 6}');
    const w = t.cli(['confirm', c, '--evaluator', `node ${FAKE}`, '--fixtures', first(30), '--policy', six, '--quiet']);
    expect(w.json.error.code).toBe('PLAN_UNREACHABLE');
    expect(w.json.error.message).toMatch(/give at least 42 fixtures \(you gave 30\), or --seeds-per-fixture 3, /);
    expect(treeHash(t.knowledge)).toBe(before);
  });
});

function cliEnvOf(t: Tree, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return fakeEnv(t.dir, extra);
}

describe('a plan bound before the new-plan defaults', () => {
  // Bound by the code before them (reference defaults, lanes in digest order) with test/fixtures/policy-small.json,
  // its screen run: 1 pair recorded.
  const BOUND = path.join(PROJECT_ROOT, 'test/fixtures/bound-before-new-defaults/knowledge');
  const args = [
    '--evaluator',
    'node test/fixtures/evaluators/fake.js',
    '--evaluator-mode',
    'persistent',
    '--fixtures',
    'test/fixtures/fixtures-12.jsonl',
    '--quiet',
    '--json',
  ];

  for (const policy of [[], ['--policy', 'test/fixtures/policy-small.json']]) {
    const given = policy.length ? 'given the same partial policy' : 'given no policy';
    it(`resumes as bound (policy, lanes), ${given}`, () => {
      const k = copySampleKnowledge(BOUND);
      const plan = () =>
        JSON.parse(
          fs.readFileSync(path.join(k, 'demo/context_bundles/candidates', BOUND_DIGEST, 'evaluator_plan.json'), 'utf8'),
        );
      const before = plan();
      const r = runCli(['confirm', BOUND_DIGEST.slice(0, 12), ...args, ...policy, '--knowledge', k], {
        env: {FAKE_DELTA: '0.2'},
      });
      expect([r.status, r.json.status, r.json.comparison.screen_pairs, r.json.plan_digest]).toEqual([
        0,
        'confirmed',
        1,
        before.plan_digest,
      ]);
      expect(plan()).toEqual(before);
    });
  }
});

const BOUND_DIGEST = '077c757658dc974912053a43183244a34162e133bc8781e0affa6d5a6af32582';

describe('the plain-language policy guide', () => {
  it('is linked from README and quotes the sizing table calibrate computes (its rows and fixture counts)', () => {
    const guide = fs.readFileSync(path.join(PROJECT_ROOT, 'docs/choosing-a-policy.md'), 'utf8');
    expect(fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8')).toContain('(docs/choosing-a-policy.md)');
    expect(guide).toContain('calibrate --table sizing');
    for (const topic of [
      '`min_effect`',
      '`confidence_z`',
      'Looks',
      'Lanes',
      'block',
      'inconclusive',
      'bounded_hoeffding',
      'bounded_betting',
    ])
      expect([topic, guide.includes(topic)]).toEqual([topic, true]);
    const r = runCli(['calibrate', '--table', 'sizing', '--reps', '5']);
    expect(r.status).toBe(0);
    // Effect, confirmation pairs and fixtures needed do not depend on the simulation: the guide's rows must equal them.
    const labels = (text: string) =>
      text
        .split('\n')
        .filter((l) => /^[+-]\d\.\d\d SD /.test(l))
        .map((l) => l.trim().split(/\s+/).slice(0, 4).join(' '));
    expect(labels(r.stdout).length).toBeGreaterThan(8);
    expect(labels(guide)).toEqual(labels(r.stdout));
    const statistics = fs.readFileSync(path.join(PROJECT_ROOT, 'docs/statistics.md'), 'utf8');
    expect(statistics).toContain(`**\`min_screen_pairs\` ${NEW_PLAN_SCREEN} instead of 2`);
  });
});
