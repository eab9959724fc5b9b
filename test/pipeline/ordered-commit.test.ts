import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {drive, unitTrial} from '../../src/core/evaluation/run/engine.js';
import {prepareRun} from '../../src/core/evaluation/run/prepare.js';
import {type MatchedTrial} from '../../src/model/index.js';
import {FIXTURES_12, POLICY_SMALL, useTrees} from '../helpers/pipeline.js';

const tree = useTrees();
const CANDIDATE = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};

/** A deterministic score for one arm of one unit, as any engine would produce. */
function score(fixtureDigest: string, seed: number, arm: string): number {
  let h = 0;
  for (const ch of `${fixtureDigest}|${seed}|${arm}`) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return 0.5 + (arm === 'candidate' ? 0.1 : 0) + ((h % 1000) / 1000 - 0.5) * 0.4;
}

describe('pairs finishing out of order are committed in plan order', () => {
  it.each([1, 2, 3, 4, 5])(
    'with 6 pairs at once and random finishing times (round %i) the evidence equals the sequential run',
    async (round) => {
      const trees = [tree(), tree()];
      const digests = trees.map((t) => t.propose('cand', CANDIDATE));
      const runs = [];
      for (const [i, t] of trees.entries()) {
        t.cli([
          'plan',
          'export',
          digests[i]!,
          '--engine',
          'in-process',
          '--fixtures',
          FIXTURES_12,
          '--policy',
          POLICY_SMALL,
          '--out',
          path.join(t.dir, 'u.jsonl'),
        ]);
        runs.push(
          await prepareRun({
            knowledge: t.knowledge,
            candidate: digests[i]!,
            mode: 'confirm',
            request: null,
            concurrency: i === 0 ? 1 : 6,
          }),
        );
      }
      let seed = round;
      const delay = () => {
        seed = (seed * 1103515245 + 12345) >>> 0;
        return seed % 7;
      };
      const results = [];
      for (const [i, run] of runs.entries()) {
        results.push(
          await drive(run, (unit) => {
            const trial: MatchedTrial = unitTrial(
              run,
              unit,
              {score: score(unit.fixture_digest, unit.seed, 'candidate')},
              {score: score(unit.fixture_digest, unit.seed, 'incumbent')},
            );
            const t = {trial, observation: null};
            return i === 0 ? Promise.resolve(t) : new Promise((resolve) => setTimeout(() => resolve(t), delay()));
          }),
        );
      }
      expect(results[1]!.comparison).toEqual(results[0]!.comparison);
      const evidence = trees.map((t, i) =>
        fs.readFileSync(t.file(`candidates/${digests[i]}/matched_trials.json`), 'utf8'),
      );
      expect(evidence[1]).toBe(evidence[0]);
    },
  );
});
