import fs from 'node:fs';
import {afterEach, describe, expect, it} from '@jest/globals';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCliProcess} from '../helpers/cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';

// Status shows each candidate (lifecycle, decision, mean and interval, rationale, when) and hints at repair.
const trees: Tree[] = [];
afterEach(() => trees.splice(0).forEach((t) => fs.rmSync(t.dir, {recursive: true, force: true})));

describe('autoctx status', () => {
  it('shows every candidate with its decision, mean, interval, pairs, rationale and time, newest first', () => {
    const t = makeTree();
    trees.push(t);
    const c = t.propose('c', {
      'playbook/playbook.md': 'Be helpful and precise.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('confirmed');
    const json = runCliProcess(['status', '--knowledge', t.knowledge, '--json']).json;
    expect(resultSchemaProblem('result-status', json)).toBeNull();
    const record = JSON.parse(fs.readFileSync(t.file(`candidates/${c}/record.json`), 'utf8'));
    const [first] = json.scenarios[0].details;
    expect(first).toEqual({
      bundle_digest: c,
      lifecycle: 'confirmed',
      decision: 'confirmed',
      mean_effect: record.comparison.mean_effect,
      confidence_low: record.comparison.confidence_low,
      confidence_high: record.comparison.confidence_high,
      pairs: record.comparison.screen_pairs + record.comparison.confirmation_pairs + record.comparison.heldout_pairs,
      arms: {
        method: '95% Student-t interval per arm, over every recorded pair (all lanes)',
        level: 0.95,
        candidate: expect.objectContaining({n: first.pairs}),
        incumbent: expect.objectContaining({n: first.pairs}),
      },
      guardrails: null,
      // The fake evaluator observes nothing beside its scores.
      observed: null,
      rationale: record.rationale,
      proposal_rationale: '',
      updated_at: record.updated_at,
    });
    expect(json.scenarios[0].repairable).toEqual([]);
    const human = runCliProcess(['status', '--knowledge', t.knowledge], {env: {NO_COLOR: '1'}}).stdout;
    const row = human.split('\n').find((l) => l.startsWith(`  ${c.slice(0, 12)}  `))!;
    expect(row.split(/ {2,}/).slice(1)).toEqual([
      c.slice(0, 12),
      'confirmed',
      'confirmed',
      record.comparison.mean_effect.toFixed(4),
      `[${record.comparison.confidence_low.toFixed(4)}, ${record.comparison.confidence_high.toFixed(4)}]`,
      String(first.pairs),
      record.updated_at.slice(0, 16).replace('T', ' '),
      '-',
    ]);
    expect(human).not.toContain('repair');
  });

  it('hints at repair when an interrupted command left work to complete, and not once repair completed it', () => {
    const t = makeTree();
    trees.push(t);
    const c = t.propose('c', {
      'playbook/playbook.md': 'Be helpful and precise.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('confirmed');
    expect(t.cli(['promote', c]).json.status).toBe('promoted');
    // A promotion cut short after the pointer moved: the served candidate's record still says confirmed.
    const file = t.file(`candidates/${c}/record.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({...JSON.parse(fs.readFileSync(file, 'utf8')), lifecycle: 'confirmed'}, null, 2),
    );
    const json = runCliProcess(['status', '--knowledge', t.knowledge, '--json']).json;
    expect(json.scenarios[0].repairable).toEqual([
      `${c}: it serves but its record says confirmed (a pointer move cut short)`,
    ]);
    const human = runCliProcess(['status', '--knowledge', t.knowledge], {env: {NO_COLOR: '1'}}).stdout;
    expect(human).toContain('an interrupted command left work to complete: run autoctx repair --scenario "demo"');
    expect(t.cli(['repair']).status).toBe(0);
    expect(runCliProcess(['status', '--knowledge', t.knowledge, '--json']).json.scenarios[0].repairable).toEqual([]);
  });
});
