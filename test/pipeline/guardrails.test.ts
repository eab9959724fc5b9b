import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {FIXTURES_12, POLICY_SMALL, useTrees, type Tree} from '../helpers/pipeline.js';
import {treeHash} from '../helpers/tree.js';

// Promotion guardrails: bound into the plan's additions (never the upstream plan or the decision).
const OBSERVING = path.join(PROJECT_ROOT, 'test/fixtures/evaluators/observing.js');
const tree = useTrees();

function evaluate(t: Tree, command: 'screen' | 'confirm', c: string, extra: string[] = [], env = {}) {
  return t.cli(
    [
      command,
      c,
      '--evaluator',
      `node ${OBSERVING}`,
      '--evaluator-mode',
      'persistent',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--quiet',
      ...extra,
    ],
    env,
  );
}

function setup(): {t: Tree; c: string} {
  const t = tree();
  const c = t.propose('b', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  return {t, c};
}

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
