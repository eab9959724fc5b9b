import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli} from '../helpers/cli.js';
import {OBSERVING, observingRun, proposedCandidate} from '../helpers/observing.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {
  FIXTURES_12,
  POLICY_SMALL,
  readUnits,
  trialResult,
  useTrees,
  type Tree,
  type WorkUnit,
} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';
import {stableDigest} from '../../src/canonical/index.js';

// What an evaluator observes beside its score (metrics, the checker's verdict, artifacts): checked when the answer
// arrives, with the artifact folder and the state area given to every evaluator command.
const tree = useTrees();

const confirm = (t: Tree, c: string, env: NodeJS.ProcessEnv = {}, extra: string[] = []) =>
  observingRun(t, 'confirm', c, extra, env);
const setup = () => proposedCandidate(tree);

describe('the evaluator environment', () => {
  it('every evaluator command gets AUTOCTX_ARTIFACT_DIR (the state area by default) and AUTOCTX_STATE_DIR', () => {
    const {t, c} = setup();
    const log = path.join(t.dir, 'env.log');
    const r = confirm(t, c, {OBS_ENV: log});
    expect([r.status, r.json.status]).toEqual([0, 'confirmed']);
    const seen = new Set(fs.readFileSync(log, 'utf8').trim().split('\n'));
    const state = path.join(t.knowledge, '.state');
    expect([...seen]).toEqual([`${path.join(state, 'artifacts')}\t${state}`]);
    // The artifacts are kept there, named by their digest, and git never sees them.
    const kept = fs.readdirSync(path.join(state, 'artifacts'));
    expect(kept.length).toBeGreaterThan(0);
    for (const name of kept) expect(name).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.readFileSync(path.join(state, '.gitignore'), 'utf8')).toMatch(/^\*$/m);
  });

  it('--artifacts DIR: the folder the user names (made on demand)', () => {
    const {t, c} = setup();
    const log = path.join(t.dir, 'env.log');
    const dir = path.join(tempDir('autoctx-artifacts-'), 'kept');
    const r = confirm(t, c, {OBS_ENV: log}, ['--artifacts', dir]);
    expect([r.status, r.json.status]).toEqual([0, 'confirmed']);
    expect(new Set(fs.readFileSync(log, 'utf8').trim().split('\n'))).toEqual(
      new Set([`${dir}\t${path.join(t.knowledge, '.state')}`]),
    );
    expect(fs.readdirSync(dir).length).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(t.knowledge, '.state', 'artifacts'))).toBe(false);
  });

  it.each([
    ['inside the knowledge tree', (t: Tree) => path.join(t.knowledge, 'demo', 'kept'), /inside the knowledge tree/],
    ['a file', (t: Tree) => path.join(t.knowledge, 'autoctx.config.json.not-a-folder'), /not a folder/],
    ['under a missing folder', (t: Tree) => path.join(t.dir, 'no', 'such', 'folder'), /parent folder does not exist/],
  ])('--artifacts %s is refused before anything is written or locked (exit 2)', (_what, where, message) => {
    const {t, c} = setup();
    const dir = where(t);
    if (/not-a-folder$/.test(dir)) fs.writeFileSync(dir, 'x');
    const before = treeHash(t.knowledge);
    const r = confirm(t, c, {}, ['--artifacts', dir]);
    expect([r.status, r.json.error.code]).toEqual([2, 'USAGE']);
    expect(r.json.error.message).toMatch(message);
    expect(treeHash(t.knowledge)).toBe(before);
  });
});

describe('answers with observations', () => {
  it.each([
    ['unknown-metric', /unknown metric "latency"/],
    ['negative-tokens', /metric input_tokens that is not a finite number >= 0/],
    ['bad-check', /"check_passed" that is not a boolean/],
    ['bad-name', /names an artifact "Final-Answer"/],
    ['missing', /names artifact (diff|final_answer) \([0-9a-f]{64}\), which is not in/],
    ['tampered', /does not hash to its name/],
    ['large', /holds 1048577 bytes \(at most 1048576\)/],
  ])('a malformed answer (%s) is an integrity failure: nothing is recorded for the pair (exit 8)', (mode, message) => {
    const {t, c} = setup();
    const r = confirm(t, c, {OBS_MODE: mode});
    expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_FAILED']);
    expect(r.json.error.message).toMatch(message);
    expect(fs.existsSync(t.file(`candidates/${c}/matched_trials.json`))).toBe(false);
  });

  it('an answer without observation keys behaves as before', () => {
    const {t, c} = setup();
    const r = confirm(t, c, {OBS_MODE: 'none'});
    expect([r.status, r.json.status]).toEqual([0, 'confirmed']);
  });
});

describe('trial_observations.json', () => {
  const observationsOf = (t: Tree, c: string) =>
    JSON.parse(t.read(`candidates/${c}/trial_observations.json`)) as {
      candidate_digest: string;
      pairs: Record<string, {candidate: any; incumbent: any}>;
      pairs_digest: string;
    };

  it(
    'holds what was observed of each arm of every recorded pair, beside ' +
      'evidence an evaluator without observations records byte for byte',
    () => {
      const {t, c} = setup();
      expect(confirm(t, c).json.status).toBe('confirmed');
      const trials = JSON.parse(t.read(`candidates/${c}/matched_trials.json`)).trials as Array<{pair_key: string}>;
      const doc = observationsOf(t, c);
      expect(doc.candidate_digest).toBe(c);
      expect(Object.keys(doc.pairs).sort()).toEqual(trials.map((x) => x.pair_key).sort());
      const artifacts = path.join(t.knowledge, '.state', 'artifacts');
      for (const pair of Object.values(doc.pairs)) {
        expect(pair.candidate.metrics.cost_usd).toBe(0.012);
        expect(pair.incumbent.metrics.cost_usd).toBe(0.01);
        expect(pair.candidate.check_passed).toBe(true);
        for (const arm of [pair.candidate, pair.incumbent]) {
          expect(Object.keys(arm.artifacts)).toEqual(['diff', 'final_answer']);
          for (const digest of Object.values(arm.artifacts) as string[])
            expect(fs.existsSync(path.join(artifacts, digest))).toBe(true);
        }
      }
      expect(t.cli(['verify']).json.errors).toEqual([]);
      // The same scores from an evaluator that observes nothing: the same evidence, and no observations file.
      const other = setup();
      expect(confirm(other.t, other.c, {OBS_MODE: 'none'}).json.status).toBe('confirmed');
      expect(other.t.read(`candidates/${other.c}/` + `matched_trials.json`)).toBe(
        t.read(`candidates/${c}/matched_trials.json`),
      );
      expect(fs.existsSync(other.t.file(`candidates/${other.c}/trial_observations.json`))).toBe(false);
    },
  );

  it('verify names the file when it observes a pair the evidence does not record, or was edited', () => {
    const {t, c} = setup();
    expect(confirm(t, c).json.status).toBe('confirmed');
    const file = t.file(`candidates/${c}/trial_observations.json`);
    const doc = observationsOf(t, c);
    const first = Object.keys(doc.pairs)[0]!;
    const stray = {...doc.pairs, ['e'.repeat(64)]: doc.pairs[first]!};
    fs.writeFileSync(file, JSON.stringify({...doc, pairs: stray, pairs_digest: stableDigest(stray)}));
    const errors = t.cli(['verify']).json.errors as Array<{code: string; file: string; message: string}>;
    expect(errors.map((e) => [e.code, e.message.includes('trial_observations.json')])).toContainEqual([
      'MISSING_EVIDENCE',
      true,
    ]);
    expect(errors.some((e) => e.message.includes(`observes pair ${'e'.repeat(64)}`))).toBe(true);
    // An edited value is found by the digest the file carries.
    const edited = structuredClone(doc.pairs);
    edited[first]!.candidate.metrics.cost_usd = 0.001;
    fs.writeFileSync(file, JSON.stringify({...doc, pairs: edited}));
    const again = t.cli(['verify']).json.errors as Array<{message: string}>;
    expect(again.some((e) => /trial_observations\.json.*pairs_digest/.test(e.message))).toBe(true);
  });

  it('is safe to lose: a tree without it, or without the artifact files, verifies and replays', () => {
    const {t, c} = setup();
    expect(confirm(t, c).json.status).toBe('confirmed');
    fs.rmSync(t.file(`candidates/${c}/trial_observations.json`));
    fs.rmSync(path.join(t.knowledge, '.state', 'artifacts'), {recursive: true});
    expect(t.cli(['verify']).json.errors).toEqual([]);
    const replay = t.cli(['replay', c]);
    expect(replay.status).toBe(0);
  });
});

describe('results brought back (trials ingest)', () => {
  function exportUnits(t: Tree, c: string): WorkUnit[] {
    const out = path.join(t.dir, 'units.jsonl');
    const r = t.cli([
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
      out,
    ]);
    expect(r.status).toBe(0);
    return readUnits(out);
  }
  const observed = (u: WorkUnit, arm: string) => ({
    score: arm === 'candidate' ? 0.8 + (u.seed % 5) / 100 : 0.5 + (u.seed % 3) / 100,
    metrics: {latency_ms: arm === 'candidate' ? 900 : 1000, input_tokens: 10, output_tokens: 5, cost_usd: 0.002},
    check_passed: true,
    artifacts: {final_answer: 'a'.repeat(64)},
  });

  it('may carry the same observations; they are kept in trial_observations.json with the pairs recorded', () => {
    const {t, c} = setup();
    const units = exportUnits(t, c);
    const file = path.join(t.dir, 'results.jsonl');
    const lines = units.map((u) => JSON.stringify(trialResult(u, observed(u, 'candidate'), observed(u, 'incumbent'))));
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const r = t.cli(['trials', 'ingest', c, file]);
    expect([r.status, r.json.status]).toEqual([0, 'confirmed']);
    const trials = JSON.parse(t.read(`candidates/${c}/matched_trials.json`)).trials as Array<{pair_key: string}>;
    const doc = JSON.parse(t.read(`candidates/${c}/trial_observations.json`));
    expect(Object.keys(doc.pairs).sort()).toEqual(trials.map((x) => x.pair_key).sort());
    expect(Object.values(doc.pairs)[0]).toEqual({
      candidate: {
        metrics: observed(units[0]!, 'candidate').metrics,
        check_passed: true,
        artifacts: {final_answer: 'a'.repeat(64)},
      },
      incumbent: {
        metrics: observed(units[0]!, 'incumbent').metrics,
        check_passed: true,
        artifacts: {final_answer: 'a'.repeat(64)},
      },
    });
    expect(t.cli(['verify']).json.errors).toEqual([]);
  });

  it('a malformed observation is refused before anything is written (SCHEMA_VIOLATION)', () => {
    const {t, c} = setup();
    const units = exportUnits(t, c);
    const file = path.join(t.dir, 'results.jsonl');
    const bad = {...observed(units[0]!, 'candidate'), metrics: {tokens: 3}};
    fs.writeFileSync(file, `${JSON.stringify(trialResult(units[0]!, bad, observed(units[0]!, 'incumbent')))}\n`);
    const before = treeHash(t.knowledge);
    const r = t.cli(['trials', 'ingest', c, file]);
    expect(r.json.error.code).toBe('SCHEMA_VIOLATION');
    expect(r.json.error.message).toMatch(/candidate has an unknown metric "tokens"/);
    expect(treeHash(t.knowledge)).toBe(before);
  });
});

describe('report and status show what was observed', () => {
  const failedPairs = (t: Tree, c: string) => {
    const doc = JSON.parse(t.read(`candidates/${c}/trial_observations.json`));
    return Object.entries(doc.pairs as Record<string, any>)
      .filter(([, p]) => p.candidate.check_passed === false || p.incumbent.check_passed === false)
      .map(([k]) => k);
  };

  it(
    "each arm's median, p90 and mean, and side by side the 5 largest differences and every failed check " +
      "with both arms' artifacts (escaped; not kept when the file is gone): report --json, md, html, status",
    () => {
      const {t, c} = setup();
      expect(confirm(t, c, {OBS_MODE: 'fail-odd'}).json.status).toBe('confirmed');
      const trials = JSON.parse(t.read(`candidates/${c}/matched_trials.json`)).trials as Array<any>;
      const doc = JSON.parse(t.read(`candidates/${c}/trial_observations.json`));
      const latencies = (arm: string) =>
        trials.map((x) => doc.pairs[x.pair_key][arm].metrics.latency_ms as number).sort((a, b) => a - b);
      // One artifact gone from the store: the report says so instead of its text.
      const gone = doc.pairs[trials[0].pair_key].incumbent.artifacts.diff as string;
      fs.rmSync(path.join(t.knowledge, '.state', 'artifacts', gone));
      const out = path.join(t.dir, 'reports');
      const r = t.cli(['report', c, '--out', out]);
      expect(r.status).toBe(0);
      expect(r.json.observed.pairs).toBe(trials.length);
      for (const arm of ['candidate', 'incumbent']) {
        const xs = latencies(arm);
        expect(r.json.observed[arm].metrics.latency_ms).toEqual({
          n: xs.length,
          mean: xs.reduce((a, b) => a + b, 0) / xs.length,
          median: xs.length % 2 ? xs[(xs.length - 1) / 2] : (xs[xs.length / 2 - 1]! + xs[xs.length / 2]!) / 2,
          p90: expect.any(Number),
        });
      }
      expect(r.json.observed.candidate.checks).toEqual({passed: trials.length, failed: 0});
      const failed = failedPairs(t, c);
      expect(failed.length).toBeGreaterThan(0);
      expect(r.json.observed.incumbent.checks).toEqual({passed: trials.length - failed.length, failed: failed.length});
      // The 5 largest |differences| first, then every other failed check, each pair once.
      const byDiff = [...trials]
        .map((x, i) => ({x, i, d: Math.abs(x.candidate_score - x.incumbent_score)}))
        .sort((a, b) => b.d - a.d || a.i - b.i);
      const shown = r.json.side_by_side as Array<any>;
      const keyOf = (p: any) => trials.find((x) => x.fixture === p.fixture && x.seed === p.seed)!.pair_key;
      expect(shown.slice(0, 5).map(keyOf).sort()).toEqual(
        byDiff
          .slice(0, 5)
          .map((e) => e.x.pair_key)
          .sort(),
      );
      expect(new Set(shown.map(keyOf))).toEqual(new Set([...byDiff.slice(0, 5).map((e) => e.x.pair_key), ...failed]));
      for (const p of shown.filter((p) => failed.includes(keyOf(p)))) expect(p.reasons).toContain('check failed');
      const md = fs.readFileSync(r.json.markdown, 'utf8');
      const html = fs.readFileSync(r.json.html, 'utf8');
      expect(md).toContain('#### Side by side');
      expect(md).toMatch(/```text\n<answer candidate> f\d+ & done\n```/);
      expect(html).toContain('<pre>&lt;answer incumbent&gt; ');
      expect(html).not.toContain('<answer incumbent>');
      if (shown.some((p) => keyOf(p) === trials[0].pair_key)) {
        expect(md).toContain('**diff** (incumbent): not kept');
        expect(html).toContain('not kept');
      }
      // status: the same summaries in --json, and a line per arm under the candidate's row.
      const status = t.cli(['status']).json.scenarios[0].details.find((d: any) => d.bundle_digest === c);
      expect(status.observed).toEqual(r.json.observed);
      const human = runCli(['status', '--knowledge', t.knowledge], {env: {NO_COLOR: '1'}}).stdout;
      expect(human).toMatch(/\n {6}candidate: latency_ms median \d+ p90 \d+ mean [\d.]+ \(n \d+\), /);
      expect(human).toMatch(
        new RegExp(`\\n {6}incumbent: .*cost_usd median 0\\.01 ` + `.*checks ${trials.length - failed.length}/`),
      );
    },
  );

  it('report --artifacts DIR reads the artifacts where confirm --artifacts kept them', () => {
    const {t, c} = setup();
    const dir = path.join(tempDir('autoctx-artifacts-'), 'kept');
    expect(confirm(t, c, {}, ['--artifacts', dir]).json.status).toBe('confirmed');
    const out = path.join(t.dir, 'reports');
    const elsewhere = t.cli(['report', c, '--out', out, '--artifacts', dir]).json;
    expect(elsewhere.side_by_side.every((p: any) => p.artifacts.every((a: any) => a.kept[0] && a.kept[1]))).toBe(true);
    const here = t.cli(['report', c, '--out', out]).json;
    expect(here.side_by_side.every((p: any) => p.artifacts.every((a: any) => !a.kept[0] && !a.kept[1]))).toBe(true);
  });
});

describe('evaluator check', () => {
  it('gets an artifact folder of its own, removed after the check; answers show what was observed', () => {
    const {t} = setup();
    const log = path.join(t.dir, 'env.log');
    const before = treeHash(t.knowledge);
    const r = runCli(
      [
        'evaluator',
        'check',
        '--evaluator',
        `node ${OBSERVING}`,
        '--fixtures',
        FIXTURES_12,
        '--knowledge',
        t.knowledge,
        '--json',
      ],
      {env: {OBS_ENV: log}},
    );
    expect(r.status).toBe(0);
    expect(resultSchemaProblem('result-evaluator-check', r.json)).toBeNull();
    expect(r.json.exchanges[0].answer).toMatchObject({metrics: {cost_usd: expect.any(Number)}, check_passed: true});
    const [dir, state] = fs.readFileSync(log, 'utf8').trim().split('\n')[0]!.split('\t');
    expect(state).toBe(path.join(t.knowledge, '.state'));
    expect(dir!.startsWith(t.knowledge)).toBe(false);
    expect(fs.existsSync(dir!)).toBe(false);
    expect(treeHash(t.knowledge)).toBe(before);
  });
});
