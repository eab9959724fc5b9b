import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {FIXTURES_12, POLICY_SMALL, useTrees, type Tree} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';
import {stableDigest} from '../../src/canonical/index.js';

// What an evaluator observes beside its score (metrics, the checker's verdict, artifacts): checked when the answer
// arrives, with the artifact folder and the state area given to every evaluator command.
const OBSERVING = path.join(PROJECT_ROOT, 'test/fixtures/evaluators/observing.js');
const tree = useTrees();

function confirm(t: Tree, c: string, env: NodeJS.ProcessEnv = {}, extra: string[] = []) {
  return t.cli(
    [
      'confirm',
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
