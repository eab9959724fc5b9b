import {spawn} from 'node:child_process';
import {createHash} from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {serveAgent, type AgentEvaluatorOptions} from '../../src/core/evaluation/agent/serve.js';
import {fixtureDigest} from '../../src/model/evaluation/fixtures.js';
import {AutoctxError} from '../../src/errors.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli, runCliProcess} from '../helpers/cli.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

/**
 * The shipped agent evaluator (`autoctx evaluator agent`) against a stub host (test/fixtures/agent/stub-host.js)
 * that runs autoctx's hooks from its home as the hosts do and records what it was given. The real hosts are
 * test/e2e's.
 */
const STUB = path.join(PROJECT_ROOT, 'test/fixtures/agent/stub-host.js');
const BIN = path.join(PROJECT_ROOT, 'bin/run.js');
const ACTIVE_PLAYBOOK = 'Answer plainly.\n';
const CANDIDATE_PLAYBOOK = 'Answer with the word MAGIC.\n';
const FIXTURE_NAME = 'fixture-name-kept-from-the-model';
const SEED = 918273645;
let dir: string;
let knowledge: string;
let tasks: string;
let active: string;
let candidate: string;

function must(args: string[]) {
  const r = runCli([...args, '--knowledge', knowledge, '--json']);
  if (r.status !== 0) throw new Error(`${args.join(' ')} → ${r.status}: ${r.stdout}${r.stderr}`);
  return r.json;
}

beforeAll(() => {
  dir = tempDir('autoctx-agent-evaluator-');
  knowledge = path.join(dir, 'knowledge');
  const rest = {'tool_guidance/search.md': 'Search the help centre first.\n'};
  const init = ['init', '--scenario', 'demo', '--from'];
  must([...init, writeSource(path.join(dir, 'base'), {'playbook/playbook.md': ACTIVE_PLAYBOOK, ...rest})]);
  candidate = must([
    'propose',
    '--from',
    writeSource(path.join(dir, 'cand'), {'playbook/playbook.md': CANDIDATE_PLAYBOOK, ...rest}),
  ]).bundle_digest as string;
  active = JSON.parse(fs.readFileSync(path.join(knowledge, 'demo/context_bundles/active.json'), 'utf8'))
    .bundle_digest as string;
  for (const b of [active, candidate])
    must([
      'tag',
      'add',
      must(['bundle', 'show', b]).manifest.components.find((c: {kind: string}) => c.kind === 'playbook').digest,
    ]);
  tasks = path.join(dir, 'tasks');
  fs.mkdirSync(path.join(tasks, 'repo/src'), {recursive: true});
  fs.writeFileSync(path.join(tasks, 'repo/src/app.txt'), 'version 1\n');
}, 120_000);

/** A checker (a node one-liner) that passes when `file` holds `text`. */
const fileHolds = (file: string, text: string) => [
  'node',
  '-e',
  `process.exit(require('fs').readFileSync(${JSON.stringify(file)},'utf8').trim()===${JSON.stringify(text)}?0:1)`,
];

interface TaskSpec {
  prompt: string;
  files?: Record<string, string>;
  dir?: string;
  dir_digest?: string;
  git?: boolean;
  checker?: {command: string[]; files?: Record<string, string>; timeout_seconds?: number};
}

function request(t: TaskSpec, arm: 'candidate' | 'incumbent' = 'candidate', id = 'r1') {
  const {prompt, checker, ...state} = t;
  const initial_state = {agent_task: 1, ...state, checker: checker ?? {command: ['true']}};
  const observation = {prompt};
  return {
    schema: 'autoctx.evaluation-request.v1',
    request_id: id,
    arm,
    scenario: 'demo',
    bundle_digest: arm === 'candidate' ? candidate : active,
    bundle_dir: path.join(dir, 'unused-bundle-dir'),
    evaluator_epoch: 'epoch-1',
    cohort: 'cohort-1',
    lane: 'heldout',
    fixture: FIXTURE_NAME,
    fixture_digest: fixtureDigest(initial_state, observation),
    seed: SEED,
    plan_digest: 'c'.repeat(64),
    initial_state,
    observation,
  };
}

async function* linesOf(items: unknown[]): AsyncIterable<string> {
  for (const i of items) yield JSON.stringify(i);
}

interface Run {
  answers: Array<Record<string, any>>;
  record: Record<string, any> | null;
  notes: string[];
  artifacts: string;
}

/** Run the evaluator in this process on some requests with the stub host. */
async function evaluate(
  requests: unknown[],
  host: 'claude-code' | 'codex' = 'claude-code',
  extra: Partial<AgentEvaluatorOptions> = {},
  env: NodeJS.ProcessEnv = {},
): Promise<Run> {
  const record = path.join(tempDir('autoctx-agent-record-'), 'record.json');
  const state = path.join(knowledge, '.state');
  const artifacts = tempDir('autoctx-agent-artifacts-');
  const answers: Array<Record<string, any>> = [];
  const notes: string[] = [];
  await serveAgent(
    {
      host,
      tasks,
      hostBin: STUB,
      hostArgs: [`--record=${record}`],
      env: {
        ...process.env,
        AUTOCTX_STATE_DIR: state,
        AUTOCTX_ARTIFACT_DIR: artifacts,
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
        SECRET_OF_THE_USER: 'never-in-the-session',
        ...env,
      },
      ...extra,
    },
    linesOf(requests),
    (line) => answers.push(JSON.parse(line)),
    (line) => notes.push(line),
  );
  const rec = fs.existsSync(record) ? JSON.parse(fs.readFileSync(record, 'utf8')) : null;
  return {answers, record: rec, notes, artifacts};
}

const artifactText = (run: Run, digest: string) => fs.readFileSync(path.join(run.artifacts, digest), 'utf8');

describe.each(['claude-code', 'codex'] as const)('%s: one arm in a clean session', (host) => {
  it("delivers the arm's own bundle through autoctx's hook, in a clean environment, and the model gets the " +
    'prompt and nothing of the fixture, seed, lane or arm', async () => {
    const prompt = `write answer.txt hello\nanswer all done\nif-context MAGIC`;
    const sent = request({
      prompt,
      files: {'README.md': 'read me\n'},
      checker: {command: fileHolds('answer.txt', 'hello')},
    });
    const run = await evaluate([sent], host);
    const r = run.record!;
    expect(r.stdin).toBe(prompt);
    // The candidate's bundle, pinned: its playbook, not the active one's, framed as the hook frames it.
    expect(r.context).toContain(CANDIDATE_PLAYBOOK.trim());
    expect(r.context).not.toContain(ACTIVE_PLAYBOOK.trim());
    expect(r.context).toContain('AUTOCTX_HISTORY_BEGIN_V1');
    expect(r.context).not.toContain('(hook stderr)');
    expect(r.env.AUTOCTX_HOOK_BUNDLE).toBe(candidate);
    // A scratch home, nothing of the user's: their variables and autoctx's own stay out; the API's pass.
    expect(r.env.HOME.startsWith(os.tmpdir())).toBe(true);
    expect(r.env.HOME).not.toBe(os.homedir());
    expect(r.env.SECRET_OF_THE_USER).toBeUndefined();
    expect(Object.keys(r.env).filter((k) => k.startsWith('AUTOCTX_'))).toEqual(['AUTOCTX_HOOK_BUNDLE']);
    if (host === 'claude-code') {
      expect(r.env.ANTHROPIC_BASE_URL).toBe('http://127.0.0.1:9');
      expect(r.env.CLAUDE_CONFIG_DIR.startsWith(r.env.HOME)).toBe(true);
      expect(r.argv).toEqual(expect.arrayContaining(['-p', '--output-format', 'stream-json']));
    } else {
      expect(r.env.CODEX_HOME.startsWith(r.env.HOME)).toBe(true);
      expect(r.argv.slice(0, 2)).toEqual(['exec', '--json']);
      expect(r.env.OPENAI_BASE_URL).toBe('http://127.0.0.1:9/v1');
    }
    // Nothing the host receives names the fixture, its seed, lane or arm.
    const seen = JSON.stringify([r.argv, r.env, r.stdin, r.cwd, r.files]);
    for (const secret of [FIXTURE_NAME, String(SEED), 'heldout', 'candidate', 'incumbent'])
      expect([secret, seen.includes(secret)]).toEqual([secret, false]);
    expect(r.files).toEqual(['README.md']);
    const a = run.answers[0]!;
    expect(a).toMatchObject({request_id: 'r1', score: 1, check_passed: true});
    expect(a.fixture_digest).toBe(sent.fixture_digest);
    expect(artifactText(run, a.artifacts.final_answer)).toBe('all done');
    expect(artifactText(run, a.artifacts.diff)).toContain('+++ b/answer.txt');
    expect(artifactText(run, a.artifacts.diff)).toContain('+hello');
    // The context told the agent MAGIC: it acted on it.
    expect(artifactText(run, a.artifacts.diff)).toContain('context-has-MAGIC.txt');
    if (host === 'claude-code')
      expect(a.metrics).toEqual({latency_ms: 4321, input_tokens: 1200, output_tokens: 34, cost_usd: 0.0125});
    else {
      expect(a.metrics).toMatchObject({input_tokens: 1200, output_tokens: 34});
      expect(a.metrics.cost_usd).toBeUndefined();
      expect(a.metrics.latency_ms).toBeGreaterThan(0);
    }
  }, 60_000);
});

describe('the checker', () => {
  it('runs after the agent stopped, its files copied in only then: exit 0 passes, any other exit fails, a last ' +
    'line {"score": x} gives the score, and AUTOCTX_FINAL_ANSWER names the final answer', async () => {
    const check =
      'const fs=require("fs");' + 'console.log(fs.readFileSync(process.' + 'env.AUTOCTX_FINAL_ANSWER,"utf8"));';
    const base = {
      prompt: 'write out.txt 42\nanswer forty-two',
      files: {'notes.md': 'n\n'},
    };
    const run = await evaluate([
      request({...base, checker: {command: ['node', 'check.js'], files: {'check.js': `${check}process.exit(0)`}}}),
      request({...base, checker: {command: ['node', 'check.js'], files: {'check.js': `${check}process.exit(1)`}}}),
      request({
        ...base,
        checker: {
          command: ['node', 'check.js'],
          files: {'check.js': `${check}console.log(JSON.stringify({score:0.25}));process.exit(1)`},
        },
      }),
    ]);
    // The agent never saw the checker's file.
    expect(run.record!.files).toEqual(['notes.md']);
    expect(run.answers.map((a) => [a.score, a.check_passed])).toEqual([
      [1, true],
      [0, false],
      [0.25, false],
    ]);
    const output = artifactText(run, run.answers[0]!.artifacts.check_output);
    expect(output).toContain('checker: exit 0');
    expect(output).toContain('forty-two');
    // The diff is the agent's work, not the checker's files.
    const diff = artifactText(run, run.answers[0]!.artifacts.diff);
    expect(diff).toContain('+++ b/out.txt');
    expect(diff).not.toContain('check.js');
  }, 60_000);

  it('a score out of [0, 1], or a checker that cannot be started, is an error: nothing is scored', async () => {
    const bad = request({
      prompt: 'answer x',
      checker: {command: ['node', '-e', 'console.log(JSON.stringify({score: 2}))']},
    });
    await expect(evaluate([bad])).rejects.toMatchObject({code: 'EVALUATOR_FAILED'});
    const missing = request({prompt: 'answer y', checker: {command: ['no-such-checker-program']}});
    await expect(evaluate([missing])).rejects.toMatchObject({code: 'EVALUATOR_FAILED'});
  });
});

describe('the prepared fixture', () => {
  it('is materialized once; a prepared tree changed since then fails before the host starts, and is never ' +
    'prepared again on its own', async () => {
    const t = {prompt: 'answer prepared', files: {'a.txt': 'original\n'}};
    const first = await evaluate([request(t)]);
    expect(first.answers[0]!.score).toBe(1);
    const prepared = path.join(knowledge, '.state/agent/prepared', request(t).fixture_digest);
    expect(fs.readFileSync(path.join(prepared, 'tree/a.txt'), 'utf8')).toBe('original\n');
    fs.writeFileSync(path.join(prepared, 'tree/a.txt'), 'tampered\n');
    const before = treeHash(knowledge);
    const error = (await evaluate([request(t)]).catch((e: unknown) => e)) as AutoctxError;
    expect(error.code).toBe('INTEGRITY');
    expect(error.message).toContain(prepared);
    // Not regenerated: the tampered tree stays as it is, and the next arm fails the same way.
    expect(treeHash(knowledge)).toBe(before);
    await expect(evaluate([request(t)])).rejects.toMatchObject({code: 'INTEGRITY'});
    // The recorded digest changed as well: a task of files alone knows the digest it must have.
    fs.writeFileSync(path.join(prepared, 'tree.sha256'), `${'0'.repeat(64)}\n`);
    await expect(evaluate([request(t)])).rejects.toMatchObject({code: 'INTEGRITY'});
  }, 60_000);

  it(
    'takes a task folder under --tasks, checked against the ' +
      "fixture's dir_digest, and can start as a git repository",
    async () => {
      const digest = runCli(['evaluator', 'agent', '--tree-digest', path.join(tasks, 'repo')]).stdout.trim();
      expect(digest).toMatch(/^[0-9a-f]{64}$/);
      const t = {prompt: 'write src/app.txt version 2', dir: 'repo', dir_digest: digest, git: true};
      const run = await evaluate([request(t)]);
      expect(run.record!.files).toEqual(expect.arrayContaining(['.git', 'src', 'src/app.txt']));
      const diff = artifactText(run, run.answers[0]!.artifacts.diff);
      expect(diff).toContain('-version 1');
      expect(diff).toContain('+version 2');
      expect(diff).not.toContain('.git/');
      const wrong = {...t, prompt: 'answer other', dir_digest: 'f'.repeat(64)};
      await expect(evaluate([request(wrong)])).rejects.toMatchObject({code: 'INTEGRITY'});
      const outside = {prompt: 'answer outside', dir: '../..'};
      await expect(evaluate([request(outside as TaskSpec)])).rejects.toMatchObject({code: 'INVALID_INPUT'});
    },
  );

  it('refuses a request whose fixture digest does not attest its content', async () => {
    const r = {...request({prompt: 'answer z'}), fixture_digest: 'd'.repeat(64)};
    await expect(evaluate([r])).rejects.toMatchObject({code: 'INTEGRITY'});
  });
});

describe('budgets and bounds', () => {
  it("stops the agent at the trial's budget: the trial scores 0, its checker not run", async () => {
    const started = Date.now();
    const run = await evaluate([request({prompt: 'sleep 20000\nanswer late'})], 'claude-code', {
      trialTimeoutSeconds: 1,
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    const a = run.answers[0]!;
    expect([a.score, a.check_passed]).toEqual([0, false]);
    expect(a.metrics.latency_ms).toBeGreaterThanOrEqual(1000);
    expect(artifactText(run, a.artifacts.transcript)).toContain("stopped by autoctx at the trial's budget of 1 s");
    expect(artifactText(run, a.artifacts.check_output)).toContain('not run');
  });

  it('keeps every artifact content-addressed and within its bound', async () => {
    const run = await evaluate([request({prompt: `shout 700000\nwrite big.txt ${'y'.repeat(600_000)}\nanswer ok`})]);
    const a = run.answers[0]!;
    const limits: Record<string, number> = {final_answer: 65536, transcript: 262144, diff: 524288, check_output: 65536};
    for (const [name, digest] of Object.entries(a.artifacts as Record<string, string>)) {
      const bytes = fs.readFileSync(path.join(run.artifacts, digest));
      expect([name, createHash('sha256').update(bytes).digest('hex')]).toEqual([name, digest]);
      expect([name, bytes.length <= limits[name]!]).toEqual([name, true]);
    }
    expect(artifactText(run, a.artifacts.transcript)).toContain('left out by autoctx');
    expect(fs.readdirSync(run.artifacts).every((f) => /^[0-9a-f]{64}$/.test(f))).toBe(true);
  });

  it("a host that fails is the host's failure, not the agent's: an error, nothing scored", async () => {
    await expect(evaluate([request({prompt: 'crash'})])).rejects.toMatchObject({code: 'EVALUATOR_FAILED'});
    await expect(
      evaluate([request({prompt: 'answer a'})], 'claude-code', {hostBin: path.join(dir, 'no-such-host')}),
    ).rejects.toMatchObject({code: 'EVALUATOR_FAILED'});
  });
});

describe('autoctx evaluator agent, the command', () => {
  const base = () => ['evaluator', 'agent', '--host', 'codex', '--tasks', tasks, '--host-bin', STUB];
  const env = () => ({AUTOCTX_STATE_DIR: path.join(knowledge, '.state'), OPENAI_BASE_URL: 'http://127.0.0.1:9/v1'});

  it('answers JSON Lines in order, echoing each request_id (persistent mode), and one request (per-arm mode)', () => {
    const lines = [
      request({prompt: 'answer one'}, 'candidate', 'q-1'),
      request({prompt: 'answer two'}, 'incumbent', 'q-2'),
    ];
    const r = runCliProcess(base(), {input: `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`, env: env()});
    expect([r.status, r.stderr]).toEqual([0, '']);
    const answers = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(answers.map((a) => [a.request_id, a.score, a.check_passed])).toEqual([
      ['q-1', 1, true],
      ['q-2', 1, true],
    ]);
    const one = runCliProcess(base(), {input: JSON.stringify(lines[0]), env: env()});
    expect(one.status).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({request_id: 'q-1', score: 1});
  });

  it.each([
    [['--host', 'cursor'], 2],
    [['--trial-timeout', '0'], 2],
    [['--tasks', '/no/such/folder'], 2],
    [['--no-such-flag'], 2],
  ])('refuses %j with one line on stderr and exit %i, reading no request', (flags, code) => {
    const r = runCli([...base(), ...flags], {env: env()});
    expect(r.status).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/USAGE|UNKNOWN_FLAG|Expected/);
  });

  it('an error while serving is one line on stderr with its code, and the exit code of that code', () => {
    const r = runCliProcess(base(), {input: 'not json\n', env: env()});
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('INVALID_INPUT');
    const crash = runCliProcess(base(), {input: JSON.stringify(request({prompt: 'crash'})), env: env()});
    expect(crash.status).toBe(8);
    expect(crash.stderr).toContain('EVALUATOR_FAILED');
  });
});

describe('an error in persistent mode', () => {
  it.each([
    ['oclif', '0'],
    ['fast path', '1'],
  ])(
    'ends the evaluator (%s) while autoctx still holds its stdin open, so autoctx sees the failure, not a timeout',
    async (_how, fast) => {
      const child = spawn(
        process.execPath,
        [BIN, 'evaluator', 'agent', '--host', 'codex', '--tasks', tasks, '--host-bin', STUB],
        {
          env: {...process.env, AUTOCTX_STATE_DIR: path.join(knowledge, '.state'), AUTOCTX_FAST_PATH: fast},
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += String(d);
      });
      child.stdin.write('not json\n'); // and stdin stays open
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.stdin.destroy();
      expect(code).toBe(2);
      expect(stderr).toContain('INVALID_INPUT');
    },
  );
});

describe('through autoctx', () => {
  /** Twelve agent tasks whose checker passes only where the session's context told the agent the MAGIC word. */
  function magicFixtures(file: string): string {
    const lines = Array.from({length: 12}, (_, i) =>
      JSON.stringify({
        fixture: `task-${i}`,
        initial_state: {
          agent_task: 1,
          files: {'n.txt': `${i}\n`},
          checker: {command: ['node', '-e', 'process.exit(require("fs").existsSync("context-has-MAGIC.txt")?0:1)']},
        },
        observation: {prompt: `if-context MAGIC\nanswer ${i}`},
      }),
    );
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  }
  const evaluator = (extra = '') =>
    `${process.execPath} ${path.join(PROJECT_ROOT, 'bin/run.js')} evaluator agent --host claude-code ` +
    `--tasks ${tasks} --host-bin ${STUB}${extra}`;
  const POLICY = path.join(PROJECT_ROOT, 'test/fixtures/policy-small.json');

  it('screen with --concurrency 2, persistent: each arm gets its own bundle, what the agent did kept per arm', () => {
    const k = path.join(tempDir('autoctx-agent-screen-'), 'knowledge');
    fs.cpSync(knowledge, k, {recursive: true});
    const fixtures = magicFixtures(path.join(path.dirname(k), 'fixtures.jsonl'));
    const r = runCli([
      'screen',
      candidate,
      '--evaluator',
      evaluator(),
      '--evaluator-mode',
      'persistent',
      '--concurrency',
      '2',
      '--fixtures',
      fixtures,
      '--policy',
      POLICY,
      '--knowledge',
      k,
      '--json',
    ]);
    expect([r.status, r.json?.status]).toEqual([0, 'screened']);
    const observed = JSON.parse(
      fs.readFileSync(path.join(k, 'demo/context_bundles/candidates', candidate, 'trial_observations.json'), 'utf8'),
    );
    const pairs = Object.values(observed.pairs) as Array<Record<string, Record<string, any>>>;
    expect(pairs.length).toBeGreaterThan(0);
    for (const p of pairs) {
      // Only the candidate's bundle holds the tagged MAGIC playbook.
      expect([p.candidate!.check_passed, p.incumbent!.check_passed]).toEqual([true, false]);
      for (const arm of [p.candidate!, p.incumbent!])
        for (const digest of Object.values(arm.artifacts as Record<string, string>))
          expect(fs.existsSync(path.join(k, '.state/artifacts', digest))).toBe(true);
    }
  }, 120_000);

  it('runs exported work units into result lines that trials ingest takes', () => {
    const k = path.join(tempDir('autoctx-agent-units-'), 'knowledge');
    fs.cpSync(knowledge, k, {recursive: true});
    const fixtures = magicFixtures(path.join(path.dirname(k), 'fixtures.jsonl'));
    const units = path.join(path.dirname(k), 'units.jsonl');
    const exported = runCli([
      'plan',
      'export',
      candidate,
      '--engine',
      'agent-ci',
      '--fixtures',
      fixtures,
      '--policy',
      POLICY,
      '--out',
      units,
      '--knowledge',
      k,
      '--json',
    ]);
    expect(exported.status).toBe(0);
    const ran = runCliProcess(
      [
        'evaluator',
        'agent',
        '--units',
        '--host',
        'claude-code',
        '--tasks',
        tasks,
        '--host-bin',
        STUB,
        '--knowledge',
        k,
      ],
      {input: fs.readFileSync(units, 'utf8')},
    );
    expect([ran.status, ran.stderr]).toEqual([0, '']);
    const results = ran.stdout.trim().split('\n');
    expect(results).toHaveLength(exported.json.units);
    const first = JSON.parse(results[0]!);
    expect(first).toMatchObject({schema: 'autoctx.trial-result.v1', candidate: {score: 1}, incumbent: {score: 0}});
    expect(first.candidate.metrics.cost_usd).toBe(0.0125);
    const file = path.join(path.dirname(k), 'results.jsonl');
    fs.writeFileSync(file, ran.stdout);
    const ingested = runCli(['trials', 'ingest', candidate, file, '--knowledge', k, '--json']);
    expect(ingested.json?.ingested).toBeGreaterThan(0);
    expect(ingested.json.comparison.mean_effect).toBe(1);
  });

  it(
    'refuses an arm whose bundle the tree does not hold before ' + 'its host starts: no session without its context',
    async () => {
      const r = {...request({prompt: 'answer a'}), bundle_digest: 'e'.repeat(64)};
      const run = evaluate([r]);
      await expect(run).rejects.toMatchObject({code: 'EVALUATOR_FAILED'});
    },
  );
});

describe('without oclif (the fast path bin/run.js takes for evaluator agent)', () => {
  const both = (args: string[], input = '') =>
    ['1', '0'].map((fast) => {
      const r = runCliProcess(args, {
        input,
        env: {AUTOCTX_FAST_PATH: fast, AUTOCTX_STATE_DIR: path.join(knowledge, '.state'), NO_COLOR: '1'},
      });
      return {status: r.status, stdout: r.stdout, stderr: r.stderr};
    });

  it.each([
    ['an answer', ['--host', 'claude-code', '--tasks', '{tasks}', '--host-bin', STUB], true],
    ['a tree digest', ['--tree-digest', '{tasks}'], false],
    ['a bad folder', ['--host', 'codex', '--tasks', '/no/such/folder'], false],
    ['a bad host (oclif answers)', ['--host', 'cursor', '--tasks', '{tasks}'], false],
    ['an unknown flag (oclif answers)', ['--host', 'codex', '--tasks', '{tasks}', '--hots', 'x'], false],
  ])('gives the same bytes and exit code as oclif: %s', (_name, flags, withRequest) => {
    const args = ['evaluator', 'agent', ...(flags as string[]).map((f) => f.replace('{tasks}', tasks))];
    const input = withRequest ? JSON.stringify(request({prompt: 'answer same'})) : '';
    const [fast, slow] = both(args, input);
    expect(fast).toEqual(slow);
    expect(fast!.status === 0 ? fast!.stdout : fast!.stderr).not.toBe('');
  });
});

describe('an evaluator killed outright', () => {
  it('leaves no agent running and no scratch folder: the host is ended with it', async () => {
    const record = path.join(tempDir('autoctx-agent-kill-'), 'record.json');
    const child = spawn(
      process.execPath,
      [
        path.join(PROJECT_ROOT, 'bin/run.js'),
        ...['evaluator', 'agent', '--host', 'claude-code', '--tasks', tasks, '--host-bin', STUB],
        `--host-arg=--record=${record}`,
      ],
      {env: {...process.env, AUTOCTX_STATE_DIR: path.join(knowledge, '.state')}, stdio: ['pipe', 'ignore', 'ignore']},
    );
    child.stdin.write(`${JSON.stringify(request({prompt: 'sleep 60000'}))}\n`);
    const deadline = Date.now() + 30_000;
    while (!fs.existsSync(record) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const host = JSON.parse(fs.readFileSync(record, 'utf8')).pid as number;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive(host)).toBe(true);
    child.kill('SIGKILL');
    const gone = Date.now() + 10_000;
    while (alive(host) && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
    expect(alive(host)).toBe(false);
    // Nor its scratch folder: the workspace the host ran in is removed with it.
    const workspace = JSON.parse(fs.readFileSync(record, 'utf8')).cwd as string;
    const removed = Date.now() + 10_000;
    while (fs.existsSync(workspace) && Date.now() < removed) await new Promise((r) => setTimeout(r, 100));
    expect(fs.existsSync(path.dirname(workspace))).toBe(false);
  }, 60_000);
});
