import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {FIXTURES_12, POLICY_SMALL, useTrees, type Tree} from '../helpers/pipeline.js';
import {treeHash} from '../helpers/tree.js';
import {runCli} from '../helpers/cli.js';
import {OBSERVING, observingRun, proposedCandidate} from '../helpers/observing.js';

// Promotion guardrails: bound into the plan's additions (never the upstream plan or the decision).
const tree = useTrees();

const evaluate = (t: Tree, command: 'screen' | 'confirm', c: string, extra: string[] = [], env = {}) =>
  observingRun(t, command, c, extra, env);
const setup = () => proposedCandidate(tree);

const plan = (t: Tree, c: string) => JSON.parse(t.read(`candidates/${c}/evaluator_plan.json`));
const guardrailFlags = (...exprs: string[]) => exprs.flatMap((e) => ['--guardrail', e]);

describe('--guardrail binds guardrails into the plan', () => {
  it('in the additions, canonical and sorted; the upstream plan and its digest are those of a plan without', () => {
    const {t, c} = setup();
    const bare = tree(t);
    const r = evaluate(t, 'screen', c, guardrailFlags('p90( latency_ms ) <= +10.0%', 'median(cost_usd)<=1.25x'));
    expect([r.status, r.json.status]).toEqual([0, 'screened']);
    const p = plan(t, c);
    expect(p.additions.guardrails).toEqual(['median(cost_usd) <= 1.25x', 'p90(latency_ms) <= +10%']);
    expect(JSON.stringify(p.plan)).not.toContain('latency_ms');
    expect(evaluate(bare, 'screen', c).status).toBe(0);
    expect(plan(bare, c).plan_digest).toBe(p.plan_digest);
    expect(plan(bare, c).additions.guardrails).toBeUndefined();
    expect(plan(bare, c).additions_digest).not.toBe(p.additions_digest);
  });

  it('a later run without the flag keeps them; with others it is refused (PLAN_CHANGED, exit 8)', () => {
    const {t, c} = setup();
    expect(evaluate(t, 'screen', c, guardrailFlags('median(cost_usd) <= 1.25x')).status).toBe(0);
    const before = treeHash(t.knowledge);
    const other = evaluate(t, 'confirm', c, guardrailFlags('median(cost_usd) <= 1.5x'));
    expect([other.status, other.json.error.code]).toEqual([8, 'PLAN_CHANGED']);
    expect(other.json.error.message).toContain(
      'the guardrails differ from those bound in evaluator_plan.json (["median(cost_usd) <= 1.25x"])',
    );
    expect(treeHash(t.knowledge)).toBe(before);
    // The same guardrail spelled otherwise is the same guardrail.
    const same = evaluate(t, 'confirm', c, guardrailFlags('median( cost_usd ) <= 1.250x'));
    expect([same.status, same.json.status]).toEqual([0, 'confirmed']);
    expect(plan(t, c).additions.guardrails).toEqual(['median(cost_usd) <= 1.25x']);
  });

  it.each([
    ['screen', ['median(cost) <= 1.2x'], 'unknown metric "cost"'],
    ['confirm', ['p90(latency_ms) <= 10%'], 'a share needs its sign (write +10%)'],
    ['plan export', ['mean(output_tokens) < +500'], 'not a guardrail expression'],
  ])('%s with a malformed guardrail is refused before anything is written (exit 2, one line)', (cmd, exprs, why) => {
    const {t, c} = setup();
    const before = treeHash(t.knowledge);
    const out = path.join(t.dir, 'units.jsonl');
    const r =
      cmd === 'plan export'
        ? t.cli([
            'plan',
            'export',
            c,
            '--engine',
            'k8s',
            '--fixtures',
            FIXTURES_12,
            '--out',
            out,
            ...guardrailFlags(...exprs),
          ])
        : evaluate(t, cmd as 'screen', c, guardrailFlags('median(cost_usd) <= 1.25x', ...exprs));
    expect([r.status, r.json.error.code]).toEqual([2, 'INVALID_INPUT']);
    expect(r.json.error.message).toContain(`--guardrail ${JSON.stringify(exprs[0])}: ${why}`);
    expect(treeHash(t.knowledge)).toBe(before);
    expect(fs.existsSync(out)).toBe(false);
    const human = t.cli([...(cmd === 'plan export' ? ['plan', 'export'] : [cmd]), c, '--guardrail', exprs[0]!]);
    expect(human.status).toBe(2);
  });

  it('plan export binds them too', () => {
    const {t, c} = setup();
    const out = path.join(t.dir, 'units.jsonl');
    const r = t.cli([
      'plan',
      'export',
      c,
      '--engine',
      'k8s',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--out',
      out,
      ...guardrailFlags('max(input_tokens) <= +200'),
    ]);
    expect([r.status, r.json.status]).toEqual([0, 'exported']);
    expect(plan(t, c).additions.guardrails).toEqual(['max(input_tokens) <= +200']);
  });
});

/** A candidate confirmed by the observing evaluator (candidate: latency 1200+, cost 0.012; incumbent: 1000+, 0.01). */
function confirmed(exprs: string[], env: NodeJS.ProcessEnv = {}): {t: Tree; c: string} {
  const {t, c} = setup();
  const r = evaluate(t, 'confirm', c, guardrailFlags(...exprs), env);
  expect([r.status, r.json.status]).toEqual([0, 'confirmed']);
  return {t, c};
}

const PASSING = ['median(cost_usd) <= 1.25x', 'max(output_tokens) <= +0'];

describe('the gate before promotion', () => {
  it('passes: promote records each verdict; replay recomputes them bit for bit; verify and status agree', () => {
    const {t, c} = confirmed(PASSING);
    const r = t.cli(['promote', c]);
    expect([r.status, r.json.status]).toEqual([0, 'promoted']);
    expect(r.json.guardrails.map((v: {guardrail: string; verdict: string}) => [v.guardrail, v.verdict])).toEqual([
      ['max(output_tokens) <= +0', 'pass'],
      ['median(cost_usd) <= 1.25x', 'pass'],
    ]);
    const stored = JSON.parse(t.read(`candidates/${c}/promotion_guardrails.json`));
    expect(stored.guardrails).toEqual(r.json.guardrails);
    expect(stored).toMatchObject({candidate_digest: c, incumbent_digest: t.baseline, passed: true, pairs: 6});
    expect(stored.guardrails[1]).toMatchObject({candidate: 0.012, incumbent: 0.01, limit: 0.0125, missing_pairs: 0});
    // The promotion record keeps the upstream shape.
    const promotion = t.read(`promotions/${r.json.promotion_id}.json`);
    expect(promotion).not.toContain('guardrail');
    const replay = t.cli(['replay', c]);
    expect([replay.status, replay.json.status, replay.json.guardrails.status]).toEqual([0, 'ok', 'ok']);
    expect(replay.json.guardrails.replayed).toEqual(stored);
    expect(t.cli(['verify']).json).toMatchObject({status: 'ok', errors: []});
    const status = t
      .cli(['status'])
      .json.scenarios[0].details.find((d: {bundle_digest: string}) => d.bundle_digest === c);
    expect(status.guardrails).toEqual(stored.guardrails);
    const human = runCli(['status', '--knowledge', t.knowledge]);
    expect(human.stdout).toContain('guardrail median(cost_usd) <= 1.25x: pass (candidate 0.012, limit 0.0125');
  });

  it('fails: promote refuses (GUARDRAIL_FAILED, exit 3, one line), writes nothing, keeps it confirmed', () => {
    const {t, c} = confirmed(['p90(latency_ms) <= +10%', ...PASSING]);
    const before = treeHash(t.knowledge);
    const r = t.cli(['promote', c]);
    expect([r.status, r.json.error.code]).toEqual([3, 'GUARDRAIL_FAILED']);
    expect(r.json.error.message).toMatch(
      /^promotion guardrail p90\(latency_ms\) <= \+10%: fail \(candidate \d+(\.\d+)?, limit \d+(\.\d+)?, incumbent /,
    );
    expect(r.json.error.data.guardrails.map((v: {verdict: string}) => v.verdict)).toEqual(['pass', 'pass', 'fail']);
    expect(treeHash(t.knowledge)).toBe(before);
    const human = runCli(['promote', c, '--knowledge', t.knowledge]);
    expect([human.status, human.stdout]).toEqual([3, '']);
    expect(human.stderr.trim().split('\n')).toHaveLength(1);
    expect(human.stderr).toContain('GUARDRAIL_FAILED');
    expect(treeHash(t.knowledge)).toBe(before);
    // status says what the gate would answer now.
    const row = t.cli(['status']).json.scenarios[0].details.find((d: {bundle_digest: string}) => d.bundle_digest === c);
    expect([row.lifecycle, row.guardrails.map((v: {verdict: string}) => v.verdict)]).toEqual([
      'confirmed',
      ['pass', 'pass', 'fail'],
    ]);
  });

  it('unmeasured: an evaluator that reports no metrics fails closed (GUARDRAIL_UNMEASURED, exit 3)', () => {
    const {t, c} = confirmed(['median(cost_usd) <= 1.25x'], {OBS_MODE: 'none'});
    const before = treeHash(t.knowledge);
    const r = t.cli(['promote', c]);
    expect([r.status, r.json.error.code]).toEqual([3, 'GUARDRAIL_UNMEASURED']);
    expect(r.json.error.message).toContain(
      'median(cost_usd) <= 1.25x: unmeasured (6 of 6 pairs without the metric for both arms)',
    );
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it('a release transition to ACTIVE promotes through the same gate', () => {
    const {t, c} = confirmed(['p90(latency_ms) <= +10%']);
    expect(t.cli(['release', 'name', 'v1', t.baseline]).status).toBe(0);
    expect(t.cli(['release', 'name', 'v2', c, '--rollback-target', 'v1']).status).toBe(0);
    for (const to of ['SHADOW', 'CANARY'])
      expect(t.cli(['release', 'transition', 'v2', '--to', to, '--rationale', to]).status).toBe(0);
    const r = t.cli(['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'go']);
    expect([r.status, r.json.error.code]).toEqual([3, 'GUARDRAIL_FAILED']);
    expect(fs.existsSync(t.file(`candidates/${c}/promotion_guardrails.json`))).toBe(false);
    expect(JSON.parse(t.read('active.json')).bundle_digest).toBe(t.baseline);
  });

  it('verify and replay catch a hostile edit of promotion_guardrails.json; its observations may be lost', () => {
    const {t, c} = confirmed(PASSING);
    expect(t.cli(['promote', c]).status).toBe(0);
    const file = t.file(`candidates/${c}/promotion_guardrails.json`);
    const good = fs.readFileSync(file, 'utf8');
    const doc = JSON.parse(good);
    doc.guardrails[1].candidate = 0.0119; // a lower cost than observed
    fs.writeFileSync(file, JSON.stringify(doc, null, 2));
    const v = t.cli(['verify']);
    expect([v.status, v.json.status]).toEqual([8, 'failed']);
    expect(v.json.errors).toEqual([
      expect.objectContaining({
        code: 'REPLAY_MISMATCH',
        file: `demo/context_bundles/candidates/${c}/promotion_guardrails.json`,
        message: expect.stringContaining('guardrails[1] differs (the tree makes median(cost_usd) <= 1.25x: pass'),
      }),
    ]);
    const replay = t.cli(['replay', c]);
    expect([replay.status, replay.json.status, replay.json.guardrails.status]).toEqual([8, 'mismatch', 'mismatch']);
    // A record no promote writes: a verdict that did not pass.
    doc.guardrails[1].candidate = 0.012;
    doc.guardrails[1].verdict = 'fail';
    fs.writeFileSync(file, JSON.stringify(doc, null, 2));
    expect(t.cli(['verify']).json.errors[0].message).toContain('it records a guardrail that did not pass');
    // Without trial_observations.json (safe to lose) the verdicts are not recomputed, and the rest still checks.
    fs.writeFileSync(file, good);
    fs.rmSync(t.file(`candidates/${c}/trial_observations.json`));
    expect(t.cli(['verify']).json).toMatchObject({status: 'ok', errors: []});
    const again = t.cli(['replay', c]);
    expect([again.status, again.json.status, again.json.guardrails.status]).toEqual([0, 'ok', 'no_observations']);
    fs.writeFileSync(file, JSON.stringify({...JSON.parse(good), pairs: 4}, null, 2));
    expect(t.cli(['verify']).json.errors[0].message).toContain('pairs differs');
  });
});
