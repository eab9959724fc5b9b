import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {startFakeModel, REWARDED_INSTRUCTION, type FakeModel} from '../helpers/fake-model.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

/**
 * End to end: `autoctx evaluator agent` on the real Claude Code and the real Codex CLI (pinned in hosts-e2e/,
 * installed by `npm run e2e:install`), offline against the agent example's fake model API on 127.0.0.1, which ends
 * its answer with the line the tasks' checkers want only when the context holds the instruction the good candidate
 * adds. What the model was given is read from the requests the fake server logged. Never skipped: without the hosts
 * this fails and says how to install them.
 */
const HOSTS = path.join(PROJECT_ROOT, 'hosts-e2e/node_modules');
const BINARIES = {
  'claude-code': path.join(HOSTS, '@anthropic-ai/claude-code/bin/claude.exe'),
  codex: path.join(HOSTS, '@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex'),
} as const;
type Host = keyof typeof BINARIES;
const AGENT = path.join(PROJECT_ROOT, 'knowledge-example/agent');
const TASKS = path.join(AGENT, 'tasks');
const FIXTURES = path.join(TASKS, 'fixtures.jsonl');
const SCENARIO = 'repo-assistant';

let fake: FakeModel;
let log: string;
/** Called with each request the fake model receives, before it answers (the tampering test sets it). */
let onRequest: (() => void) | null = null;
const timings: string[] = [];
beforeAll(async () => {
  for (const bin of Object.values(BINARIES))
    if (!fs.existsSync(bin))
      throw new Error(
        `${bin} is missing: run npm run e2e:install (the pinned hosts are ` +
          `installed into hosts-e2e/, never into the project's dependencies)`,
      );
  log = path.join(tempDir('autoctx-agent-e2e-log-'), 'requests.jsonl');
  fake = await startFakeModel({log, onRequest: () => onRequest?.()});
});
afterAll(async () => {
  await fake?.close();
  if (timings.length) process.stdout.write(`agent evaluator end to end:\n${timings.map((t) => `  ${t}`).join('\n')}\n`);
});

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The CLI as its own process, asynchronously: the fake model answers in this process meanwhile. */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<Result> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/run.js'), ...args], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill(), 240_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({status, stdout, stderr, ms: Date.now() - started});
    });
  });
}

/**
 * A scratch machine for one host: HOME, a knowledge tree from the example's baseline, both candidates proposed, and
 * every component of the three bundles tagged (what a session gets at its start is its bundle's tagged components).
 */
async function machine(host: Host, name: string) {
  const root = tempDir(`autoctx-agent-e2e-${name}-`);
  const knowledge = path.join(root, 'knowledge');
  fs.mkdirSync(path.join(root, 'home'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: path.join(root, 'home'),
    XDG_CONFIG_HOME: path.join(root, 'home', '.config'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    ...(host === 'claude-code'
      ? {ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-fake'}
      : {OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-fake'}),
  };
  const autoctx = async (args: string[], expected = 0) => {
    const r = await cli([...args, '--knowledge', knowledge], env);
    if (r.status !== expected)
      throw new Error(`autoctx ${args.join(' ')}: exit ${r.status}, expected ${expected}\n${r.stdout}${r.stderr}`);
    return r;
  };
  const json = async (args: string[]) => JSON.parse((await autoctx([...args, '--json'])).stdout);
  await autoctx(['init', '--scenario', SCENARIO, '--from', path.join(AGENT, 'baseline')]);
  const baseline = (await json(['status'])).scenarios[0].active.bundle_digest as string;
  const propose = async (from: string) =>
    (await json(['propose', '--from', path.join(AGENT, from)])).bundle_digest as string;
  const good = await propose('candidate-result-line');
  const bad = await propose('candidate-terse');
  const tagged = new Set<string>();
  for (const digest of [baseline, good, bad])
    for (const c of (await json(['bundle', 'show', digest])).manifest.components as Array<{digest: string}>)
      if (!tagged.has(c.digest)) {
        tagged.add(c.digest);
        await autoctx(['tag', 'add', c.digest]);
      }
  const evaluate = [
    '--evaluator',
    `node ${path.join(PROJECT_ROOT, 'bin/run.js')} evaluator agent --host ${host} --tasks ${TASKS} ` +
      `--host-bin ${BINARIES[host]}`,
    '--evaluator-mode',
    'persistent',
    '--fixtures',
    FIXTURES,
    '--policy',
    path.join(AGENT, 'quick-policy.json'),
    '--guardrail',
    'median(input_tokens) <= 1.1x',
    // Claude Code's pairs two at a time (two evaluators, committed in plan order), Codex's one by one.
    ...(host === 'claude-code' ? ['--concurrency', '2'] : []),
    '--quiet',
  ];
  const candidateDir = (digest: string) => path.join(knowledge, SCENARIO, 'context_bundles/candidates', digest);
  const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
  return {root, knowledge, env, autoctx, json, baseline, good, bad, evaluate, candidateDir, readJson};
}

/** The requests the fake model received since line `from` of its log, as the text of the log. */
const logSince = (from: number) => fs.readFileSync(log, 'utf8').split('\n').slice(from).join('\n');
const logLines = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').length - 1 : 0);

interface Trial {
  pair_key: string;
  fixture: string;
  fixture_digest: string;
  seed: number;
  candidate_score: number;
  incumbent_score: number;
  candidate_digest: string;
  incumbent_digest: string;
  cohort: string;
}

describe.each(['claude-code', 'codex'] as const)('the agent evaluator on %s', (host) => {
  it(
    'confirms and promotes the candidate whose context holds the instruction, rejects the one without it, keeps ' +
      "both arms' artifacts, and no fixture id or seed reaches the model",
    async () => {
      const m = await machine(host, host);
      const from = logLines();
      const started = Date.now();
      const confirmed = await m.autoctx(['confirm', m.good, ...m.evaluate]);
      const confirmMs = Date.now() - started;
      const promoted = await m.autoctx(['promote', m.good]);
      expect(promoted.stdout).toMatch(/guardrail median\(input_tokens\) <= 1\.1x: pass/);
      const rejected = await m.autoctx(['confirm', m.bad, ...m.evaluate], 3);
      timings.push(
        `${host}: confirm (4 pairs, 8 agent runs) ${(confirmMs / 1000).toFixed(1)} s; reject (1 pair) ` +
          `${(rejected.ms / 1000).toFixed(1)} s; whole test ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      expect(confirmed.stderr).toBe('');
      const trials = m.readJson(path.join(m.candidateDir(m.good), 'matched_trials.json')).trials as Trial[];
      expect(trials.map((t) => [t.candidate_score, t.incumbent_score])).toEqual([
        [1, 0],
        [1, 0],
        [1, 0],
        [1, 0],
      ]);
      const status = await m.json(['status']);
      const details = status.scenarios[0].details as Array<{bundle_digest: string; lifecycle: string}>;
      expect(details.find((d) => d.bundle_digest === m.good)?.lifecycle).toBe('active');
      expect(details.find((d) => d.bundle_digest === m.bad)?.lifecycle).toBe('rejected');

      // Each arm of each pair: its metrics, its checker's verdict, its artifacts kept in the state area by digest.
      const observations = m.readJson(path.join(m.candidateDir(m.good), 'trial_observations.json'));
      const artifacts = path.join(m.knowledge, '.state/artifacts');
      const text = (digest: string) => fs.readFileSync(path.join(artifacts, digest), 'utf8');
      for (const t of trials) {
        const pair = observations.pairs[t.pair_key];
        expect([t.pair_key, pair.candidate.check_passed, pair.incumbent.check_passed]).toEqual([
          t.pair_key,
          true,
          false,
        ]);
        for (const arm of ['candidate', 'incumbent'] as const) {
          expect(Object.keys(pair[arm].artifacts).sort()).toEqual(
            expect.arrayContaining(['check_output', 'final_answer', 'transcript']),
          );
          expect(pair[arm].metrics.latency_ms).toBeGreaterThan(0);
          expect(pair[arm].metrics.input_tokens).toBeGreaterThan(0);
        }
        expect(text(pair.candidate.artifacts.final_answer)).toMatch(/\nRESULT: \S+\s*$/);
        expect(text(pair.incumbent.artifacts.final_answer)).not.toContain('RESULT:');
        expect(text(pair.incumbent.artifacts.check_output)).toContain('fail: the answer should end with "RESULT: ');
      }

      // The report gives each arm's absolute score and, side by side, both arms' answers and checks of every pair
      // (each differs, and each incumbent's check failed).
      const report = (await m.autoctx(['report', m.good, '--format', 'md'])).stdout;
      expect(report).toMatch(/\| candidate \| `[0-9a-f]{12}` \| 4 \| 1\.0000 \|/);
      expect(report).toMatch(/\| incumbent \| `[0-9a-f]{12}` \| 4 \| 0\.0000 \|/);
      const sideBySide = report.slice(report.indexOf('#### Side by side'));
      expect(sideBySide.match(/^##### /gm)).toHaveLength(4);
      for (const t of trials) {
        const pair = observations.pairs[t.pair_key];
        const heading = sideBySide.indexOf(`##### ${t.fixture}, seed ${t.seed} `);
        expect([t.fixture, heading >= 0]).toEqual([t.fixture, true]);
        const end = sideBySide.indexOf('\n##### ', heading + 1);
        const part = sideBySide.slice(heading, end < 0 ? undefined : end);
        for (const arm of ['candidate', 'incumbent'] as const) {
          const answer = text(pair[arm].artifacts.final_answer).trimEnd();
          expect(part).toContain(`**final_answer** (${arm})\n\n\`\`\`text\n${answer}\n\`\`\``);
          expect(part).toContain(`**check_output** (${arm})`);
        }
      }

      // What the model was given: each arm's bundle (the instruction in the candidate's sessions only), and nothing of
      // the experiment.
      const seen = logSince(from);
      const requests = seen
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as {method: string; url: string; body: unknown});
      const model = requests.filter((r) => r.method === 'POST' && /\/v1\/(messages|responses)/.test(r.url));
      const holding = model.filter((r) => JSON.stringify(r.body).includes(REWARDED_INSTRUCTION));
      expect(holding.length).toBeGreaterThanOrEqual(4);
      expect(model.length - holding.length).toBeGreaterThanOrEqual(4 + 2);
      const rejectedTrials = m.readJson(path.join(m.candidateDir(m.bad), 'matched_trials.json')).trials as Trial[];
      const fixtures = fs
        .readFileSync(FIXTURES, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).fixture as string);
      // The fixture ids, digests and seeds, the pairs, the cohorts, each arm's bundle digest, and the arms' and
      // held-out lane's names.
      const secrets = [
        ...fixtures,
        ...[...trials, ...rejectedTrials].flatMap((t) => [
          t.fixture_digest,
          String(t.seed),
          t.pair_key,
          t.cohort,
          t.candidate_digest,
          t.incumbent_digest,
        ]),
        'candidate',
        'incumbent',
        'heldout',
      ];
      expect(seen.length).toBeGreaterThan(10_000);
      expect(secrets.filter((s) => seen.includes(s))).toEqual([]);
    },
  );

  it(
    'a prepared fixture tampered with between its materialization ' +
      'and the agent run fails before scoring, and stays failed',
    async () => {
      const m = await machine(host, `${host}-tamper`);
      const prepared = path.join(m.knowledge, '.state/agent/prepared');
      let tampered = '';
      // While the first arm's agent runs, its fixture's prepared state (materialized and copied for that arm) is
      // edited: the second arm's copy no longer has the recorded digest.
      onRequest = () => {
        if (tampered !== '' || !fs.existsSync(prepared)) return;
        for (const digest of fs.readdirSync(prepared).filter((d) => /^[0-9a-f]{64}$/.test(d))) {
          const tree = path.join(prepared, digest, 'tree');
          const file = fs
            .readdirSync(tree, {recursive: true, encoding: 'utf8'})
            .find((f) => f.endsWith('.json') || f.endsWith('.js'));
          if (file === undefined) continue;
          fs.appendFileSync(path.join(tree, file), '\n// edited\n');
          tampered = path.join(tree, file);
        }
      };
      // Persistent mode: autoctx keeps the evaluator's stdin open, and the integrity failure still ends it at once.
      const perArm = m.evaluate;
      try {
        const r = await m.autoctx(['confirm', m.good, ...perArm], 8);
        expect(tampered).not.toBe('');
        expect(r.stderr).toMatch(/prepared state/);
        const trialsFile = path.join(m.candidateDir(m.good), 'matched_trials.json');
        const recorded = fs.existsSync(trialsFile) ? (m.readJson(trialsFile).trials as Trial[]) : [];
        expect(recorded).toEqual([]);
        // Run again: the tampered preparation is never regenerated, and no agent starts.
        onRequest = null;
        const before = logLines();
        const again = await m.autoctx(['confirm', m.good, ...perArm], 8);
        expect(again.stderr).toMatch(/prepared state/);
        expect(logLines()).toBe(before);
      } finally {
        onRequest = null;
      }
    },
  );
});

describe('npm run example:agent', () => {
  it(
    'runs on Codex against its own fake model API: the candidate ' +
      'with the instruction promoted, the other rejected',
    async () => {
      const started = Date.now();
      const r = await new Promise<Result>((resolve) => {
        const child = spawn(
          process.execPath,
          [path.join(PROJECT_ROOT, 'knowledge-example/run-agent.js'), '--host', 'codex'],
          {
            cwd: PROJECT_ROOT,
            env: {PATH: process.env.PATH, HOME: tempDir('autoctx-agent-example-home-'), LANG: 'C.UTF-8', NO_COLOR: '1'},
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (status) => resolve({status, stdout, stderr, ms: Date.now() - started}));
      });
      timings.push(`npm run example:agent -- --host codex: ${(r.ms / 1000).toFixed(1)} s`);
      // Its stderr holds the evaluations' progress lines, and no error.
      expect([r.status, r.stderr.match(/^(error|unexpected) .*/m)?.[0] ?? null]).toEqual([0, null]);
      expect(r.stdout).toMatch(/^confirmed [0-9a-f]{12} against /m);
      expect(r.stdout).toMatch(/^promoted [0-9a-f]{12} \(was /m);
      expect(r.stdout).toMatch(/^rejected [0-9a-f]{12} against /m);
      expect(r.stdout).toMatch(/wrote knowledge-example\/agent\/out\/codex\/reports\/report-[0-9a-f]{12}\.md/);
      expect(r.stdout).toContain('The fake model API received 10 requests');
    },
  );
});
