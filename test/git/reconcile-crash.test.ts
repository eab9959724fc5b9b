import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {verify} from '../../src/core/common/verify.js';
import {runCli} from '../helpers/cli.js';
import {merge} from '../helpers/git.js';
import {SCENARIOS, makeBases} from '../helpers/git-team.js';
import {tempDir, treeHash} from '../helpers/tree.js';

beforeAll(makeBases, 120_000);

/** The stage (outside the knowledge root) is crashed at every STAGE_STRIDE-th fault point; the apply at every one. */
const STAGE_STRIDE = 5;

/** What a finished reconcile leaves, but for its times: what serves, each record's lifecycle, and the steps. */
function outcome(knowledge: string) {
  const dir = path.join(knowledge, 'demo/context_bundles');
  const read = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8'));
  const candidates = path.join(dir, 'candidates');
  const records = fs
    .readdirSync(candidates)
    .sort()
    .map((d) => [d, read(path.join(candidates, d, 'record.json')).lifecycle]);
  const reconciles = fs.readdirSync(path.join(dir, 'reconciles'));
  const steps = reconciles.flatMap((f) =>
    read(path.join(dir, 'reconciles', f)).steps.map((s: {kind: string; subject: string; outcome: string}) => [
      s.kind,
      s.subject,
      s.outcome,
    ]),
  );
  return {active: read(path.join(dir, 'active.json')).bundle_digest, records, steps};
}

describe('reconcile killed before and after each durable write', () => {
  it('leaves the knowledge root untouched until the stage verifies; run again, it finishes the same', async () => {
    const {repo} = await SCENARIOS['two promotions from one parent']!();
    expect(merge(repo, 'bob').length).toBeGreaterThan(0);
    const copy = () => {
      const to = path.join(tempDir('autoctx-reconcile-crash-'), 'repo');
      fs.cpSync(repo, to, {recursive: true});
      return {repo: to, knowledge: path.join(to, 'knowledge')};
    };
    const clean = copy();
    const trace = path.join(path.dirname(clean.repo), 'trace');
    const run = (k: string, env: NodeJS.ProcessEnv = {}) =>
      runCli(['reconcile', '--knowledge', k, '--json'], {env: {GIT_CONFIG_GLOBAL: '/dev/null', ...env}});
    const first = run(clean.knowledge, {AUTOCTX_FAULT_TRACE: trace});
    expect(first.status).toBe(0);
    const expected = outcome(clean.knowledge);
    const points = fs
      .readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[0]!);
    // The writes to the knowledge root come last, two fault points each, after the apply's journal (in the state area).
    const applied = 2 * (first.json.written.length + first.json.removed.length) + 2;
    expect(applied).toBeGreaterThan(0);
    const chosen = points.filter((_, i) => i >= points.length - applied || i % STAGE_STRIDE === 0);
    for (const point of chosen) {
      const t = copy();
      const before = treeHash(t.knowledge);
      const crashed = run(t.knowledge, {AUTOCTX_FAULT: point});
      expect([point, crashed.status]).toEqual([point, null]);
      const inApply = points.indexOf(point) >= points.length - applied;
      // A crash before the apply leaves the knowledge root as the merge left it.
      if (!inApply) expect([point, treeHash(t.knowledge)]).toEqual([point, before]);
      // Run again: the commits are where they were, so it builds the same stage and finishes.
      const again = run(t.knowledge);
      expect([point, again.status]).toEqual([point, 0]);
      expect([point, verify({knowledge: t.knowledge}).errors]).toEqual([point, []]);
      expect([point, outcome(t.knowledge)]).toEqual([point, expected]);
      fs.rmSync(path.dirname(t.repo), {recursive: true, force: true});
    }
    process.stdout.write(
      `reconcile crash: ${chosen.length} of ${points.length} fault points (${applied} in the apply)\n`,
    );
  }, 300_000);
});
