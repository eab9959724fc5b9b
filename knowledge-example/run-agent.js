#!/usr/bin/env node
// The agent example: evaluates a change to a coding agent's context on the real agent. For each
// host (Claude Code, Codex) it builds a fresh, git-ignored knowledge tree in
// knowledge-example/agent/out/<host>/ from knowledge-example/agent/ (a repository assistant's
// baseline and two candidates), then confirms each candidate with autoctx's agent evaluator: for
// every trial the host runs headless in a clean session in a scratch copy of a small repository
// (knowledge-example/agent/tasks/fixtures.jsonl), with that arm's bundle delivered through
// autoctx's hook rendering, and the task's checker scores what it did. The candidate that tells
// the agent to end its answer with the line the release bot reads is confirmed and promoted; the
// one that only shortens answers is rejected. Then status and the report, with both arms'
// answers side by side.
//
// By default the hosts talk to a fake model API on 127.0.0.1 (knowledge-example/agent/fake-model.js),
// which answers deterministically and differently depending on whether its context holds that
// instruction, so the run is free, offline and repeatable. The pinned hosts come from
// `npm run e2e:install` (hosts-e2e/). With --real the hosts use a real model API instead
// (ANTHROPIC_API_KEY for Claude Code, OPENAI_API_KEY for Codex; that costs money, and a real model
// may or may not follow the instruction).
//
//   npm run example:agent [-- --host claude-code|codex|both] [--real] [--host-bin PATH]
import {spawn, spawnSync} from 'node:child_process';
import {existsSync, mkdirSync, readFileSync, rmSync} from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const bin = path.join(root, 'bin', 'run.js');
const agent = path.join(here, 'agent');
const out = path.join(agent, 'out');
const rel = (p) => path.relative(process.cwd(), p) || '.';
const HOSTS = path.join(root, 'hosts-e2e', 'node_modules');
const PINNED = {
  'claude-code': {
    bin: path.join(HOSTS, '@anthropic-ai/claude-code/bin/claude.exe'),
    name: 'Claude Code 2.1.328',
    key: 'ANTHROPIC_API_KEY',
  },
  codex: {
    bin: path.join(HOSTS, '@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex'),
    name: 'codex-cli 0.169.0',
    key: 'OPENAI_API_KEY',
  },
};

function usage(problem) {
  console.error(
    `${problem}\nusage: npm run example:agent -- [--host claude-code|codex|both] [--real] [--host-bin PATH]`,
  );
  process.exit(2);
}
const args = process.argv.slice(2);
const option = (flag) => {
  const i = args.indexOf(flag);
  if (i < 0) return undefined;
  if (i + 1 >= args.length) usage(`${flag} needs a value`);
  return args[i + 1];
};
for (const a of args.filter((a) => a.startsWith('--')))
  if (!['--host', '--real', '--host-bin'].includes(a)) usage(`unknown option ${a}`);
const real = args.includes('--real');
const hostOption = option('--host') ?? 'both';
if (!['claude-code', 'codex', 'both'].includes(hostOption)) usage(`--host must be claude-code, codex or both`);
const hosts = hostOption === 'both' ? ['claude-code', 'codex'] : [hostOption];
const hostBin = option('--host-bin');
if (hostBin && hosts.length > 1) usage('--host-bin names one host program: give --host claude-code or --host codex');
if (hostBin && !existsSync(hostBin)) usage(`--host-bin ${hostBin}: no such file`);

// Which program each host runs: --host-bin, else the pinned one in hosts-e2e/, else (with --real only) the host's
// own resolution of `claude` or `codex` on PATH.
const programs = {};
const missing = [];
for (const host of hosts) {
  if (hostBin) programs[host] = path.resolve(hostBin);
  else if (existsSync(PINNED[host].bin)) programs[host] = PINNED[host].bin;
  else if (real) programs[host] = null;
  else missing.push(host);
}
if (missing.length > 0) {
  console.error(
    `The pinned agent hosts are not installed (${missing.map((h) => PINNED[h].name).join(', ')} missing under ` +
      `${rel(HOSTS)}).\n` +
      `Install them with:  npm run e2e:install   (Claude Code and ` +
      `Codex into hosts-e2e/, about 800 MB, never into the ` +
      `project's dependencies)\n` +
      `or run one host you have:  npm run example:agent -- --host claude-code --host-bin "$(command -v claude)"\n` +
      `or use a real model API:   ${PINNED[missing[0]].key}=... npm run example:agent -- --host ${missing[0]} --real`,
  );
  process.exit(1);
}
if (real)
  for (const host of hosts)
    if (!process.env[PINNED[host].key]) {
      console.error(`--real with ${host} needs ${PINNED[host].key} in the environment (the key of the real API)`);
      process.exit(2);
    }

// Each command is shown as it can be copied and run from the project folder (with the shown environment).
const quote = (a) => (/^[\w./:=@%+,-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
function autoctx(knowledge, args, {env = {}, shownEnv = {}, json = false, expect = [0]} = {}) {
  const shown = [
    ...Object.entries(shownEnv).map(([k, v]) => `${k}=${v}`),
    'npx',
    'autoctx',
    ...args,
    '--knowledge',
    rel(knowledge),
  ]
    .map(quote)
    .join(' ');
  if (!json) console.log(`\n$ ${shown}`);
  const r = spawnSync(process.execPath, [bin, ...args, ...(json ? ['--json'] : []), '--knowledge', knowledge], {
    encoding: 'utf8',
    env: {...process.env, ...env},
    stdio: json ? ['ignore', 'pipe', 'inherit'] : ['ignore', 'inherit', 'inherit'],
  });
  if (!expect.includes(r.status)) {
    console.error(`unexpected exit ${r.status} from: ${shown}`);
    process.exit(1);
  }
  return json ? JSON.parse(r.stdout) : r;
}

/** What the evaluator (and through it the host) needs to reach the fake model API; nothing with --real. */
function hostEnv(host, url) {
  if (real) return {};
  return host === 'claude-code'
    ? {ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-fake-example'}
    : {OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-fake-example'};
}

/**
 * The fake model API as its own process (autoctx runs synchronously here): its URL from its first line of stdout.
 */
function startFake(log) {
  const child = spawn(process.execPath, [path.join(agent, 'fake-model.js'), '--log', log], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The fake goes with this process, however it ends.
  process.on('exit', () => child.kill());
  return new Promise((resolve, reject) => {
    let text = '';
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the fake model API stopped (exit ${code})`)));
    child.stdout.on('data', (d) => {
      text += d;
      if (text.includes('\n')) resolve({url: text.split('\n')[0], stop: () => child.kill()});
    });
  });
}

async function example(host) {
  const dir = path.join(out, host);
  const knowledge = path.join(dir, 'knowledge');
  rmSync(dir, {recursive: true, force: true});
  mkdirSync(dir, {recursive: true});
  const log = path.join(dir, 'model-requests.jsonl');
  const fake = real ? null : await startFake(log);
  const started = Date.now();
  console.log(
    `\n=== ${PINNED[host].name}: ` +
      (real
        ? `a real model API (${PINNED[host].key})`
        : `a fake model API at ${fake.url}, every request in ${rel(log)}`),
  );
  try {
    const env = hostEnv(host, fake?.url);
    const shownEnv = real ? {} : env;
    autoctx(knowledge, ['init', '--scenario', 'repo-assistant', '--from', rel(path.join(agent, 'baseline'))]);
    const baseline = autoctx(knowledge, ['status'], {json: true}).scenarios[0].active.bundle_digest;
    const propose = (from, generation, rationale) =>
      autoctx(
        knowledge,
        [
          'propose',
          '--from',
          rel(path.join(agent, from)),
          '--run-id',
          'agent-example',
          '--generation',
          String(generation),
          '--rationale',
          rationale,
        ],
        {json: true},
      ).bundle_digest.slice(0, 12);
    const good = propose('candidate-result-line', 1, 'end every answer with the line the release bot reads');
    const bad = propose('candidate-terse', 2, 'shorter answers');
    console.log(`\nproposed ${good} (candidate-result-line) and ${bad} (candidate-terse)`);
    // What a session gets at its start is the bootstrap package: the tagged components of the bundle that serves it.
    // Tag every component of the three bundles, so that each arm's session starts with its own bundle's texts.
    const tagged = new Set();
    for (const digest of [baseline, good, bad])
      for (const c of autoctx(knowledge, ['bundle', 'show', digest], {json: true}).manifest.components)
        if (!tagged.has(c.digest)) {
          tagged.add(c.digest);
          autoctx(knowledge, ['tag', 'add', c.digest]);
        }
    const evaluator = [
      'node',
      rel(bin),
      'evaluator',
      'agent',
      '--host',
      host,
      '--tasks',
      rel(path.join(agent, 'tasks')),
      ...(programs[host] ? ['--host-bin', programs[host]] : []),
    ]
      .map(quote)
      .join(' ');
    const evaluate = [
      '--evaluator',
      evaluator,
      '--evaluator-mode',
      'persistent',
      '--fixtures',
      rel(path.join(agent, 'tasks', 'fixtures.jsonl')),
      '--policy',
      rel(path.join(agent, 'quick-policy.json')),
      // Room for a real agent's run (the evaluator's own budget per trial is 600 s) and its checker.
      '--timeout',
      '900',
      // Checked before the promotion: the candidate's longer context may not cost more than a tenth more input.
      '--guardrail',
      'median(input_tokens) <= 1.1x',
    ];
    const good_ = autoctx(knowledge, ['confirm', good, ...evaluate], {env, shownEnv, expect: real ? [0, 3] : [0]});
    if (good_.status === 0) autoctx(knowledge, ['promote', good]);
    else console.log(`\n(the real model did not make ${good} better on these tasks: it is not promoted)`);
    autoctx(knowledge, ['confirm', bad, ...evaluate], {env, shownEnv, expect: real ? [0, 3] : [3]});
    autoctx(knowledge, ['status']);
    const reports = path.join(dir, 'reports');
    autoctx(knowledge, ['report', good, '--out', rel(reports)]);
    console.log(
      `\n${PINNED[host].name} done in ${((Date.now() - started) / 1000).toFixed(1)} s. The report, with both arms' ` +
        `answers side by side: ${rel(reports)}/ (open the .html in a browser).\nWhat each arm produced is kept in ` +
        `${rel(path.join(knowledge, '.state/artifacts'))} (never committed), its metrics in ` +
        `${rel(path.join(knowledge, 'repo-assistant/context_bundles/candidates'))}/<digest>/trial_observations.json.`,
    );
    if (fake) {
      const requests = readFileSync(log, 'utf8').trim().split('\n').length;
      console.log(`The fake model API received ${requests} requests (${rel(log)}).`);
    }
  } finally {
    fake?.stop();
  }
}

for (const host of hosts) await example(host);
if (!real)
  console.log(
    `\nThis ran against a fake model. To run the same evaluation on a real one: ` +
      `ANTHROPIC_API_KEY=... npm run example:agent -- --host claude-code --real  (or OPENAI_API_KEY=... with --host ` +
      `codex); ANTHROPIC_BASE_URL or OPENAI_BASE_URL point the hosts at another compatible API.`,
  );
