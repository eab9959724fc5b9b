import {describe, expect, it} from '@jest/globals';
import {NEW_PLAN_CONFIRMATION_POLICY} from '../../src/model/evaluation/policy.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCliProcess as runCli} from '../helpers/cli.js';

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
    const n = NEW_PLAN_CONFIRMATION_POLICY.min_screen_pairs;
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
    expect(r.stdout).toContain(`new plans screen ${NEW_PLAN_CONFIRMATION_POLICY.min_screen_pairs} pairs`);
    const s = runCli(['calibrate', '--table', 'sizing', '--reps', '30', '--json']);
    expect(s.status).toBe(0);
    expect(s.json.rows).toEqual([]);
    expect(s.json.sizing_rows.length).toBeGreaterThan(8);
  });
});
