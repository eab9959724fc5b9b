import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {schemaProblem} from '../../src/store/schemas.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {FAKE, FIXTURES_12, POLICY_SMALL, evalArgs, trialResult, useTrees, type Tree} from '../helpers/pipeline.js';
import {treeHash} from '../helpers/tree.js';

const tree = useTrees();
const CANDIDATE = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const ENV = {FAKE_DELTA: 'by-lane:0.2,0.05,0.2', FAKE_NOISE: '0.1'};

/** Evaluate exported units "elsewhere": through the same fake evaluator, as another engine would. */
function evaluateElsewhere(units: string[], t: Tree): string[] {
  const requests = units.flatMap((line) => {
    const u = JSON.parse(line);
    return u.arm_order.map((arm: string) =>
      JSON.stringify({
        ...u,
        arm,
        request_id: `${u.pair_key}:${arm}`,
        bundle_digest: arm === 'candidate' ? u.candidate_digest : u.incumbent_digest,
        bundle_dir: t.dir,
      }),
    );
  });
  const r = spawnSync(process.execPath, [FAKE], {
    input: `${requests.join('\n')}\n`,
    encoding: 'utf8',
    env: {...process.env, ...ENV},
  });
  const answers = new Map(
    r.stdout
      .trim()
      .split('\n')
      .map((l) => {
        const a = JSON.parse(l);
        return [a.request_id, a];
      }),
  );
  return units.map((line) => {
    const u = JSON.parse(line);
    const arm = (name: string) => ({score: answers.get(`${u.pair_key}:${name}`).score, valid: true});
    return JSON.stringify(trialResult(u, arm('candidate'), arm('incumbent')));
  });
}

/** Export a candidate's plan and answer every unit elsewhere: the result lines, and the file to ingest them from. */
function exportAndAnswer(t: Tree, c: string): {results: string[]; file: string} {
  const out = path.join(t.dir, 'units.jsonl');
  t.cli(['plan', 'export', c, '--engine', 'x', '--fixtures', FIXTURES_12, '--policy', POLICY_SMALL, '--out', out]);
  return {
    results: evaluateElsewhere(fs.readFileSync(out, 'utf8').trim().split('\n'), t),
    file: path.join(t.dir, 'r.jsonl'),
  };
}

describe('scale-out: plan export and trials ingest', () => {
  it('results computed elsewhere reach the decision and the evidence a sequential local run reaches', () => {
    const local = tree();
    const remote = tree();
    const c = local.propose('cand', CANDIDATE);
    expect(remote.propose('cand', CANDIDATE)).toBe(c);
    const sequential = local.cli(['confirm', c, ...evalArgs()], ENV);
    const out = path.join(remote.dir, 'units.jsonl');
    const exported = remote.cli([
      'plan',
      'export',
      c,
      '--engine',
      'elsewhere:v1',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--out',
      out,
    ]);
    expect(resultSchemaProblem('result-plan-export', exported.json)).toBeNull();
    const units = fs.readFileSync(out, 'utf8').trim().split('\n');
    expect(units).toHaveLength(12);
    for (const u of units) expect(schemaProblem('work-unit', JSON.parse(u))).toBeNull();
    const results = evaluateElsewhere(units, remote);
    for (const r of results) expect(schemaProblem('trial-result', JSON.parse(r))).toBeNull();
    const file = path.join(remote.dir, 'results.jsonl');
    // Out of order, as a cluster returns them.
    fs.writeFileSync(file, `${[...results].reverse().join('\n')}\n`);
    const ingested = remote.cli(['trials', 'ingest', c, file]);
    expect(resultSchemaProblem('result-trials-ingest', ingested.json)).toBeNull();
    expect(ingested.json.comparison).toEqual(sequential.json.comparison);
    expect(ingested.json.status).toBe(sequential.json.status);
    expect(ingested.json.discarded).toBe(12 - ingested.json.ingested);
    expect(remote.read(`candidates/${c}/matched_trials.json`)).toBe(local.read(`candidates/${c}/matched_trials.json`));
    // The same results again: nothing changes.
    const before = treeHash(remote.knowledge);
    const again = remote.cli(['trials', 'ingest', c, file]);
    expect(again.json.ingested).toBe(0);
    expect(treeHash(remote.knowledge)).toBe(before);
  });

  it('a different result for a recorded pair, a foreign unit or another plan is refused and changes nothing', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const {results, file} = exportAndAnswer(t, c);
    fs.writeFileSync(file, `${results.join('\n')}\n`);
    expect([0, 3]).toContain(t.cli(['trials', 'ingest', c, file]).status);
    const before = treeHash(t.knowledge);
    const first = JSON.parse(results[0]!);
    const cases: Array<[object, string]> = [
      [{...first, candidate: {score: first.candidate.score + 1}}, 'INGEST_CONFLICT'],
      [{...first, seed: first.seed + 1000}, 'INVALID_INPUT'],
      [{...first, plan_digest: '0'.repeat(64)}, 'INVALID_INPUT'],
      [{...first, lane: 'heldout'}, 'INVALID_INPUT'],
      [{...first, pair_key: '1'.repeat(64)}, 'INVALID_INPUT'],
      [{...first, candidate: {score: 'high'}}, 'SCHEMA_VIOLATION'],
    ];
    for (const [line, code] of cases) {
      fs.writeFileSync(file, `${JSON.stringify(line)}\n`);
      const r = t.cli(['trials', 'ingest', c, file]);
      expect([r.status, r.json.error.code]).toEqual([2, code]);
    }
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it(
    'partial results leave the candidate needing more evidence ' +
      '(exit 4) with nothing terminal written; the rest resumes it',
    () => {
      const t = tree();
      const c = t.propose('cand', CANDIDATE);
      const {results, file} = exportAndAnswer(t, c);
      fs.writeFileSync(file, `${results.slice(0, 2).join('\n')}\n`);
      const partial = t.cli(['trials', 'ingest', c, file]);
      expect([partial.status, partial.json.status, partial.json.ingested]).toEqual([4, 'needs_more_evidence', 2]);
      expect(fs.existsSync(t.file(`candidates/${c}/negative_result.json`))).toBe(false);
      expect(JSON.parse(t.read(`candidates/${c}/record.json`)).lifecycle).toBe('screened');
      fs.writeFileSync(file, `${results.join('\n')}\n`);
      const rest = t.cli(['trials', 'ingest', c, file]);
      expect(rest.json.already_recorded).toBe(2);
      expect(['confirmed', 'rejected', 'inconclusive']).toContain(rest.json.status);
    },
  );

  it('a plan bound for external evaluation is not run by a local evaluator', () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    t.cli([
      'plan',
      'export',
      c,
      '--engine',
      'x',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--out',
      path.join(t.dir, 'u.jsonl'),
    ]);
    const r = t.cli(['confirm', c, ...evalArgs()]);
    expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_CHANGED']);
  });
});
