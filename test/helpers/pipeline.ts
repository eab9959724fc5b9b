import fs from 'node:fs';
import {afterEach} from '@jest/globals';
import path from 'node:path';
import {TRIAL_RESULT_SCHEMA, type TrialResultLine} from '../../src/core/evaluation/trials-ingest.js';
import {runCli, type CliResult} from './cli.js';
import {PROJECT_ROOT} from './paths.js';
import {tempDir, writeSource} from './tree.js';

export const FAKE = path.join(PROJECT_ROOT, 'test/fixtures/evaluators/fake.js');
export const AUDIT = path.join(PROJECT_ROOT, 'test/fixtures/evaluators/audit.js');
export const FIXTURES_12 = path.join(PROJECT_ROOT, 'test/fixtures/fixtures-12.jsonl');
export const POLICY_SMALL = path.join(PROJECT_ROOT, 'test/fixtures/policy-small.json');

/** An exported work unit (plan export's units.jsonl), as far as a result names it. */
export type WorkUnit = Omit<TrialResultLine, 'schema' | 'candidate' | 'incumbent'>;

/** The work units of a units.jsonl file. */
export function readUnits(file: string): WorkUnit[] {
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as WorkUnit);
}

/** A trial result answering a unit (autoctx.trial-result.v1), with the arms given. */
export function trialResult(u: WorkUnit, candidate: object, incumbent: object): Record<string, unknown> {
  return {
    schema: TRIAL_RESULT_SCHEMA,
    plan_digest: u.plan_digest,
    pair_key: u.pair_key,
    lane: u.lane,
    fixture: u.fixture,
    fixture_digest: u.fixture_digest,
    seed: u.seed,
    candidate,
    incumbent,
  };
}

export interface Tree {
  dir: string;
  knowledge: string;
  baseline: string;
  propose(name: string, files: Record<string, string>, runId?: string): string;
  cli(args: string[], env?: NodeJS.ProcessEnv): CliResult;
  read(rel: string): string;
  file(rel: string): string;
}

/** A fresh knowledge tree with a baseline, and helpers to run the CLI on it. */
export function makeTree(): Tree {
  const dir = tempDir('autoctx-pipeline-');
  const src = writeSource(path.join(dir, 'baseline'), {
    'playbook/playbook.md': 'Be helpful.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  const init = runCli([
    'init',
    '--scenario',
    'demo',
    '--from',
    src,
    '--knowledge',
    path.join(dir, 'knowledge'),
    '--json',
  ]);
  if (init.status !== 0) throw new Error(init.stdout + init.stderr);
  return treeIn(dir, init.json.bundle_digest);
}

/** A copy of a tree (its folder, knowledge and sources), for a test that starts where another's setup ended. */
export function cloneTree(from: Tree): Tree {
  const dir = tempDir('autoctx-pipeline-');
  fs.cpSync(from.dir, dir, {recursive: true});
  return treeIn(dir, from.baseline);
}

function treeIn(dir: string, baseline: string): Tree {
  const knowledge = path.join(dir, 'knowledge');
  const cli = (args: string[], env?: NodeJS.ProcessEnv) => runCli([...args, '--knowledge', knowledge, '--json'], {env});
  return {
    dir,
    knowledge,
    baseline,
    propose(name, files, runId = name) {
      const s = writeSource(path.join(dir, name), files);
      const r = cli(['propose', '--from', s, '--run-id', runId]);
      if (r.status !== 0) throw new Error(r.stdout + r.stderr);
      return r.json.bundle_digest as string;
    },
    cli,
    file: (rel) => path.join(knowledge, 'demo/context_bundles', rel),
    read: (rel) => fs.readFileSync(path.join(knowledge, 'demo/context_bundles', rel), 'utf8'),
  };
}

/** confirm/screen arguments with the fake evaluator. */
export function evalArgs(extra: string[] = [], persistent = true): string[] {
  return [
    '--evaluator',
    `node ${FAKE}`,
    ...(persistent ? ['--evaluator-mode', 'persistent'] : []),
    '--fixtures',
    FIXTURES_12,
    '--policy',
    POLICY_SMALL,
    '--quiet',
    ...extra,
  ];
}

export function fakeEnv(dir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {FAKE_LOG: path.join(dir, 'calls.log'), FAKE_COUNTER: path.join(dir, 'counter'), ...extra};
}

export function calls(dir: string): string[] {
  const f = path.join(dir, 'calls.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n').filter(Boolean) : [];
}

/** Fresh trees (or copies of `from`) for each test of a file, removed after each test. */
export function useTrees(): (from?: Tree) => Tree {
  const trees: Tree[] = [];
  afterEach(() => {
    for (const t of trees.splice(0)) fs.rmSync(t.dir, {recursive: true, force: true});
  });
  return (from) => {
    const t = from ? cloneTree(from) : makeTree();
    trees.push(t);
    return t;
  };
}

/**
 * A tree with a promotion, a rejection (with its negative result and ledger
 * copy), a rollback and a campaign, built with the CLI as a user would; with
 * `more`, a second rollback and an epoch rollover too.
 */
export function historyTree(more = false): Tree {
  const t = makeTree();
  const must = (r: {status: number | null; stdout: string; stderr: string}, exit = 0) => {
    if (r.status !== exit) throw new Error(r.stdout + r.stderr);
  };
  // The promoted candidate has a harness validator, so the tree has a runtime file for the deletion and tamper suites.
  const a = t.propose('better', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
    'harness_validator/check_output.py': 'def validate(output):\n    return "error" not in output\n',
  });
  const b = t.propose('worse', {
    'playbook/playbook.md': 'Be terse.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  must(t.cli(['confirm', a, ...evalArgs(['--campaign', 'nightly'])], fakeEnv(t.dir)));
  const fixturesB = path.join(PROJECT_ROOT, 'test/fixtures/fixtures-12b.jsonl');
  must(
    t.cli(
      ['confirm', b, ...evalArgs(['--campaign', 'nightly']).map((x) => (x === FIXTURES_12 ? fixturesB : x))],
      fakeEnv(t.dir, {FAKE_DELTA: '-0.2'}),
    ),
    3,
  );
  must(t.cli(['promote', a]));
  must(t.cli(['rollback', '--rationale', 'rolled back after the on-call review']));
  // A candidate whose first evaluator was a typo, bound again with --rebind: the tree keeps a superseded plan.
  const r = t.propose('retried', {
    'playbook/playbook.md': 'Be helpful, precise and brief.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  must(
    t.cli(
      ['confirm', r, ...evalArgs([], false).map((x) => (x === `node ${FAKE}` ? `nod ${FAKE}` : x))],
      fakeEnv(t.dir),
    ),
    8,
  );
  must(
    t.cli([
      'plan',
      'export',
      r,
      '--engine',
      'remote-v1',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--out',
      path.join(t.dir, 'retried-units.jsonl'),
      '--rebind',
    ]),
  );
  if (more) {
    must(t.cli(['rollback', '--rationale', 'the review cleared it']));
    // The rollback service: an emergency rollback approved by a second principal, then undone.
    const emergency = t.cli(['rollback', '--emergency', '--rationale', 'citations dropped', '--actor', 'alice']);
    must(emergency);
    must(t.cli(['rollback', 'approve', emergency.json.execution_key, '--actor', 'bob']));
    must(t.cli(['rollback', '--rationale', 'the citations are back']));
    must(t.cli(['epoch', 'rollover', '--evaluator-epoch', 'epoch-2']));
    // Bootstrap curation: two tags, a reference, a grant, a handoff with two revisions.
    const active = JSON.parse(t.read('active.json')).bundle_digest;
    const components = t.cli(['bundle', 'show', active]).json.manifest.components as Array<{digest: string}>;
    for (const c of components.slice(0, 2)) must(t.cli(['tag', 'add', c.digest]));
    must(t.cli(['reference', 'add', 'billing']));
    must(t.cli(['grant', 'add', 'billing']));
    for (const [i, summary] of ['sync fixed in 4.2', 'quota e-mails still pending'].entries()) {
      const file = path.join(t.dir, `handoff-${i}.json`);
      fs.writeFileSync(file, JSON.stringify({summary, owner: 'support-lead'}));
      must(t.cli(['handoff', 'write', '--id', 'release-notes', '--from', file]));
    }
    // Releases: descriptors, a blocked and an applied transition in the global scope, a scope of its own with a
    // runnable set.
    must(t.cli(['release', 'name', 'v1', active]));
    must(
      t.cli([
        'release',
        'name',
        'v2',
        a,
        '--rollback-target',
        'v1',
        '--golden-inputs',
        FIXTURES_12,
        '--vocabulary-version',
        'dict-3',
        '--model-profile',
        'fast',
      ]),
    );
    must(t.cli(['release', 'transition', 'v1', '--to', 'DEPRECATED', '--rationale', 'nothing else serves']), 3);
    must(t.cli(['release', 'transition', 'v2', '--to', 'RETIRED', '--rationale', 'superseded by the rollover']));
    must(t.cli(['release', 'runnable', '--all', '--rationale', 'every release runs here']));
    must(t.cli(['release', 'name', 'v3', r]));
    must(
      t.cli([
        'release',
        'transition',
        'v3',
        '--to',
        'SHADOW',
        '--scope',
        'EU',
        '--shadow-percent',
        '5',
        '--rationale',
        'try it in eu',
      ]),
    );
    must(
      t.cli([
        'release',
        'runnable',
        'v1',
        'v3',
        '--default',
        'v1',
        '--scope',
        'eu',
        '--rationale',
        'what the eu build ships',
      ]),
    );
    // A refused rollback is recorded too: v2, the recorded target, is RETIRED.
    must(t.cli(['rollback', '--rationale', 'back to v2']), 3);
  }
  return t;
}
