import {spawn, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';
// @ts-expect-error a plain ES module of the tests
import {startFakeModels} from './fake-models.js';

/**
 * End to end: the real Claude Code and the real Codex CLI (pinned in
 * hosts-e2e/, installed by `npm run e2e:install`), offline against a fake
 * model API on 127.0.0.1, with autoctx's hooks registered by `autoctx hook
 * install`. What the model was given is read from the request bodies the
 * fake server received. Never skipped: without the hosts this fails and says
 * how to install them.
 */
const HOSTS = path.join(PROJECT_ROOT, 'hosts-e2e/node_modules');
const CLAUDE = path.join(HOSTS, '@anthropic-ai/claude-code/bin/claude.exe');
const CODEX = path.join(HOSTS, '@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex');
const BEGIN = 'AUTOCTX_HISTORY_BEGIN_V1';
const PROMPT = 'Why are my files not syncing? Mention the tray icon.';

interface Fake {
  port: number;
  requests: Array<{method: string; url: string; body: Record<string, unknown>}>;
  close(): Promise<void>;
}

let fake: Fake;
const timings: string[] = [];
beforeAll(async () => {
  for (const bin of [CLAUDE, CODEX])
    if (!fs.existsSync(bin))
      throw new Error(
        `${bin} is missing: run npm run e2e:install (the pinned hosts are ` +
          `installed into hosts-e2e/, never into the project's dependencies)`,
      );
  fake = (await startFakeModels()) as Fake;
});
afterAll(async () => {
  await fake?.close();
  if (timings.length) process.stdout.write(`hosts end to end:\n${timings.map((t) => `  ${t}`).join('\n')}\n`);
});

function run(
  cmd: string,
  args: string[],
  options: {cwd: string; env: NodeJS.ProcessEnv},
): Promise<{status: number | null; stdout: string; stderr: string; ms: number}> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe']});
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill(), 180_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({status, stdout, stderr, ms: Date.now() - started});
    });
  });
}

/**
 * A scratch machine: HOME, the autoctx configuration, a project, the example tree with two tags.
 * With `canary`, the tags are the better candidate's, which is confirmed and released as a
 * canary for every session: only routing brings them to a session.
 */
function machine(name: string, canary = false) {
  const root = tempDir(`autoctx-e2e-${name}-`);
  const home = path.join(root, 'home');
  const project = path.join(root, 'project');
  const knowledge = path.join(root, 'knowledge');
  fs.mkdirSync(home, {recursive: true});
  fs.mkdirSync(project, {recursive: true});
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    LANG: 'C.UTF-8',
  };
  const autoctx = (args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'bin/run.js'), ...args], {env, encoding: 'utf8'});
    if (r.status !== 0) throw new Error(`autoctx ${args.join(' ')}: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  const example = (...p: string[]) => path.join(PROJECT_ROOT, 'knowledge-example', ...p);
  const src = example('demo/candidate-better');
  autoctx(['init', '--scenario', 'demo', '--from', canary ? example('demo/baseline') : src, '--knowledge', knowledge]);
  let served = JSON.parse(fs.readFileSync(path.join(knowledge, 'demo/context_bundles/active.json'), 'utf8'))
    .bundle_digest as string;
  if (canary) {
    const baseline = served;
    served = JSON.parse(autoctx(['propose', '--from', src, '--knowledge', knowledge, '--json']))
      .bundle_digest as string;
    autoctx([
      'confirm',
      served,
      '--evaluator',
      `node ${example('evaluator.js')}`,
      '--evaluator-mode',
      'persistent',
      '--fixtures',
      example('demo/fixtures.jsonl'),
      '--quiet',
      '--knowledge',
      knowledge,
    ]);
    autoctx(['release', 'name', 'v1', baseline, '--knowledge', knowledge]);
    autoctx(['release', 'name', 'v2', served, '--knowledge', knowledge]);
    autoctx(['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'shadow', '--knowledge', knowledge]);
    autoctx([
      'release',
      'transition',
      'v2',
      '--to',
      'CANARY',
      '--canary-percent',
      '100',
      '--rationale',
      'every session',
      '--knowledge',
      knowledge,
    ]);
  }
  const components = JSON.parse(autoctx(['bundle', 'show', served, '--knowledge', knowledge, '--json'])).manifest
    .components as Array<{kind: string; digest: string; content: string}>;
  const tagged = components.filter((c) => c.kind === 'playbook' || c.kind === 'hints');
  for (const c of tagged) autoctx(['tag', 'add', c.digest, '--knowledge', knowledge]);
  const rendered = JSON.parse(autoctx(['bootstrap', 'render', '--session', 'any', '--knowledge', knowledge, '--json']))
    .content as string;
  return {root, home, project, knowledge, env, autoctx, tagged, rendered};
}

const RECORDER = path.join(PROJECT_ROOT, 'test/e2e/record-stdin.js');
const FIXTURES = path.join(PROJECT_ROOT, 'test/fixtures/hosts');

/** Register a recorder of each event's stdin beside autoctx's hook in the host's settings file. */
function addRecorder(file: string, dir: string): void {
  const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const [event, name] of [
    ['SessionStart', 'session-start'],
    ['UserPromptSubmit', 'user-prompt-submit'],
  ] as const) {
    settings.hooks[event].push({
      ...(event === 'SessionStart' ? {matcher: 'startup|resume|clear|compact|fork'} : {}),
      hooks: [{type: 'command', command: `'${process.execPath}' '${RECORDER}' '${dir}' ${name}`, timeout: 5}],
    });
  }
  fs.writeFileSync(file, JSON.stringify(settings, null, 2));
}

/**
 * What the host sent, set against the committed fixtures: the same fields.
 * With AUTOCTX_E2E_RECORD=1 the fixtures are written from the recording
 * instead (identifiers and paths replaced).
 */
function checkShapes(host: string, dir: string): void {
  for (const name of ['session-start', 'user-prompt-submit']) {
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.startsWith(`${name}-`))
      .sort();
    expect([host, name, files.length > 0]).toEqual([host, name, true]);
    const seen = JSON.parse(fs.readFileSync(path.join(dir, files[0]!), 'utf8')) as Record<string, unknown>;
    const fixture = path.join(FIXTURES, `${host}.${name}.json`);
    if (process.env.AUTOCTX_E2E_RECORD === '1') {
      const clean = Object.fromEntries(
        Object.entries(seen).map(([k, v]) => [
          k,
          k === 'session_id'
            ? '00000000-0000-4000-8000-000000000000'
            : k === 'cwd'
              ? '/work/app'
              : k === 'transcript_path' && typeof v === 'string'
                ? '/home/user/transcript.jsonl'
                : k === 'prompt'
                  ? 'why is my folder not syncing?'
                  : v,
        ]),
      );
      fs.writeFileSync(fixture, `${JSON.stringify(clean)}\n`);
    }
    const committed = JSON.parse(fs.readFileSync(fixture, 'utf8')) as Record<string, unknown>;
    expect([host, name, Object.keys(seen).sort()]).toEqual([host, name, Object.keys(committed).sort()]);
  }
}

/** The request bodies received since `from`, as one string. */
const bodiesSince = (from: number) =>
  JSON.stringify(
    fake.requests
      .slice(from)
      .filter((r) => r.method === 'POST')
      .map((r) => r.body),
  );
const count = (text: string, needle: string) => text.split(needle).length - 1;
const receipts = (knowledge: string) => {
  const dir = path.join(knowledge, '.state/bootstrap/receipts');
  return fs.existsSync(dir)
    ? fs.readdirSync(dir).map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')))
    : [];
};

/**
 * Each tagged component's text and its citation, present exactly once, and the package itself unmodified in the body.
 */
function assertDelivered(body: string, m: ReturnType<typeof machine>): void {
  expect(body).toContain(JSON.stringify(m.rendered).slice(1, -1));
  for (const c of m.tagged) {
    expect([c.kind, count(body, `digest=${c.digest}`)]).toEqual([c.kind, 1]);
    const line = JSON.stringify(`> ${c.content.split('\n')[0]}`).slice(1, -1);
    expect([c.kind, count(body, line)]).toEqual([c.kind, 1]);
  }
  expect(Buffer.byteLength(m.rendered, 'utf8')).toBeLessThanOrEqual(4096);
}

describe('Claude Code 2.1.328', () => {
  it(
    'gets the package once at session start, recall on the first prompt leaves out ' +
      'what it delivered, a resume prints nothing, a broken configuration injects nothing',
    async () => {
      const m = machine('claude');
      m.autoctx([
        'hook',
        'install',
        '--host',
        'claude-code',
        '--project',
        m.project,
        '--knowledge',
        m.knowledge,
        '--scenario',
        'demo',
      ]);
      m.autoctx(['hook', 'enable', '--project', m.project]);
      const recorded = path.join(m.root, 'recorded');
      addRecorder(path.join(m.project, '.claude/settings.local.json'), recorded);
      const env = {
        ...m.env,
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${fake.port}`,
        ANTHROPIC_API_KEY: 'sk-fake',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
      };
      const from = fake.requests.length;
      const first = await run(CLAUDE, ['-p', PROMPT, '--output-format', 'json'], {cwd: m.project, env});
      expect({status: first.status}).toEqual({status: 0});
      timings.push(`claude -p with both hooks: ${first.ms} ms; package ${Buffer.byteLength(m.rendered, 'utf8')} bytes`);
      const body = bodiesSince(from);
      expect(body).toContain('SessionStart hook additional context: # autoctx bootstrap context');
      assertDelivered(body, m);
      // The first prompt's recall ran and left the delivered components out; without the receipt it would have returned
      // them.
      expect(body).toContain('UserPromptSubmit hook additional context: # autoctx recalled context');
      const control = JSON.parse(m.autoctx(['recall', '--query', PROMPT, '--knowledge', m.knowledge, '--json']));
      expect(control.items.map((i: {component_digest: string}) => i.component_digest)).toEqual(
        expect.arrayContaining(m.tagged.map((c) => c.digest)),
      );
      expect(receipts(m.knowledge).map((r) => [r.lifecycle, r.state])).toEqual([['startup', 'injected']]);
      checkShapes('claude-code', recorded);
      // A resume of the session: the hook prints nothing, its receipt is skipped.
      const session = JSON.parse(first.stdout).session_id as string;
      const resumed = await run(
        CLAUDE,
        ['-p', 'And after a restart?', '--resume', session, '--output-format', 'json'],
        {
          cwd: m.project,
          env,
        },
      );
      expect(resumed.status).toBe(0);
      expect(
        receipts(m.knowledge)
          .map((r) => [r.lifecycle, r.state])
          .sort(),
      ).toEqual([
        ['resume', 'skipped'],
        ['startup', 'injected'],
      ]);
      // A broken configuration: the prompt goes through with nothing injected, and the host reports success.
      fs.writeFileSync(path.join(m.env.XDG_CONFIG_HOME!, 'autoctx/config.json'), '{');
      const before = fake.requests.length;
      const broken = await run(CLAUDE, ['-p', PROMPT, '--output-format', 'json'], {cwd: m.project, env});
      expect(broken.status).toBe(0);
      expect(JSON.parse(broken.stdout).is_error).toBe(false);
      expect(count(bodiesSince(before), BEGIN)).toBe(0);
    },
  );
});

describe('Claude Code 2.1.328, routed', () => {
  it("delivers the canary's curated context to a session in its share, and pins the session to it", async () => {
    const m = machine('claude-canary', true);
    m.autoctx([
      'hook',
      'install',
      '--host',
      'claude-code',
      '--project',
      m.project,
      '--knowledge',
      m.knowledge,
      '--scenario',
      'demo',
    ]);
    m.autoctx(['hook', 'enable', '--project', m.project]);
    const env = {
      ...m.env,
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${fake.port}`,
      ANTHROPIC_API_KEY: 'sk-fake',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
    };
    const from = fake.requests.length;
    const first = await run(CLAUDE, ['-p', PROMPT, '--output-format', 'json'], {cwd: m.project, env});
    expect({status: first.status}).toEqual({status: 0});
    assertDelivered(bodiesSince(from), m);
    expect(receipts(m.knowledge).map((r) => [r.state, r.routing?.version, r.routing?.state])).toEqual([
      ['injected', 'v2', 'CANARY'],
    ]);
    const states = fs
      .readdirSync(path.join(m.knowledge, '.state/hosts/claude-code'))
      .map((f) => JSON.parse(fs.readFileSync(path.join(m.knowledge, '.state/hosts/claude-code', f), 'utf8')));
    expect(states.map((s) => s.routing?.version)).toEqual(['v2']);
  });
});

describe('codex-cli 0.169.0', () => {
  function codexHome(m: ReturnType<typeof machine>): string {
    const home = path.join(m.root, 'codex-home');
    fs.mkdirSync(home, {recursive: true});
    fs.writeFileSync(
      path.join(home, 'config.toml'),
      [
        'model = "gpt-fake"',
        'model_provider = "fake"',
        '',
        '[model_providers.fake]',
        'name = "fake"',
        `base_url = "http://127.0.0.1:${fake.port}/v1"`,
        'wire_api = "responses"',
        'env_key = "FAKE_API_KEY"',
        '',
        '[features]',
        'plugins = false',
        'remote_plugin = false',
        '',
        `[projects."${m.project}"]`,
        'trust_level = "trusted"',
        '',
      ].join('\n'),
    );
    return home;
  }

  it('runs no hook that was not trusted: autoctx never writes trust', async () => {
    const m = machine('codex-untrusted');
    const env = {...m.env, CODEX_HOME: codexHome(m), FAKE_API_KEY: 'sk-fake'};
    m.autoctx([
      'hook',
      'install',
      '--host',
      'codex',
      '--project',
      m.project,
      '--knowledge',
      m.knowledge,
      '--scenario',
      'demo',
    ]);
    m.autoctx(['hook', 'enable', '--project', m.project]);
    expect(fs.readFileSync(path.join(env.CODEX_HOME, 'config.toml'), 'utf8')).not.toMatch(/trusted_hash/);
    const from = fake.requests.length;
    const r = await run(CODEX, ['exec', '--skip-git-repo-check', PROMPT], {cwd: m.project, env});
    expect(r.status).toBe(0);
    expect(count(bodiesSince(from), BEGIN)).toBe(0);
    expect(receipts(m.knowledge)).toEqual([]);
  });

  it(
    'trusted, gets the package once as its own message, recall leaves out what ' +
      'it delivered, a resume prints nothing, a broken tree injects nothing',
    async () => {
      const m = machine('codex');
      const env = {...m.env, CODEX_HOME: codexHome(m), FAKE_API_KEY: 'sk-fake'};
      m.autoctx([
        'hook',
        'install',
        '--host',
        'codex',
        '--project',
        m.project,
        '--knowledge',
        m.knowledge,
        '--scenario',
        'demo',
      ]);
      m.autoctx(['hook', 'enable', '--project', m.project]);
      const recorded = path.join(m.root, 'recorded');
      addRecorder(path.join(m.project, '.codex/hooks.json'), recorded);
      // Trust for this run only, Codex's own switch (the hash it records for /hooks is not a documented format).
      const trusted = ['exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust'];
      const from = fake.requests.length;
      const first = await run(CODEX, [...trusted, PROMPT], {cwd: m.project, env});
      expect(first.status).toBe(0);
      timings.push(
        `codex exec with both hooks: ${first.ms} ms; package ${Buffer.byteLength(m.rendered, 'utf8')} bytes`,
      );
      const body = bodiesSince(from);
      expect(body).toContain(JSON.stringify(`${m.rendered}`).slice(1, 60));
      assertDelivered(body, m);
      expect(body).toContain('# autoctx recalled context');
      expect(receipts(m.knowledge).map((r) => [r.lifecycle, r.state])).toEqual([['startup', 'injected']]);
      checkShapes('codex', recorded);
      const resumed = await run(
        CODEX,
        [
          ...trusted.slice(0, 1),
          'resume',
          '--last',
          '--skip-git-repo-check',
          '--dangerously-bypass-hook-trust',
          'And after a restart?',
        ],
        {cwd: m.project, env},
      );
      expect(resumed.status).toBe(0);
      expect(
        receipts(m.knowledge)
          .map((r) => [r.lifecycle, r.state])
          .sort(),
      ).toEqual([
        ['resume', 'skipped'],
        ['startup', 'injected'],
      ]);
      // A broken tree: the prompt goes through, nothing injected, success.
      fs.writeFileSync(path.join(m.knowledge, 'demo/context_bundles/bootstrap/curation.json'), '{');
      const before = fake.requests.length;
      const broken = await run(CODEX, [...trusted, PROMPT], {cwd: m.project, env});
      expect(broken.status).toBe(0);
      expect(count(bodiesSince(before), BEGIN)).toBe(0);
    },
  );
  it(
    "routed: delivers the canary's curated context to a " + 'session in its share, and pins the session to it',
    async () => {
      const m = machine('codex-canary', true);
      const env = {...m.env, CODEX_HOME: codexHome(m), FAKE_API_KEY: 'sk-fake'};
      m.autoctx([
        'hook',
        'install',
        '--host',
        'codex',
        '--project',
        m.project,
        '--knowledge',
        m.knowledge,
        '--scenario',
        'demo',
      ]);
      m.autoctx(['hook', 'enable', '--project', m.project]);
      const from = fake.requests.length;
      const first = await run(CODEX, ['exec', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', PROMPT], {
        cwd: m.project,
        env,
      });
      expect(first.status).toBe(0);
      assertDelivered(bodiesSince(from), m);
      expect(receipts(m.knowledge).map((r) => [r.state, r.routing?.version, r.routing?.state])).toEqual([
        ['injected', 'v2', 'CANARY'],
      ]);
      const states = fs
        .readdirSync(path.join(m.knowledge, '.state/hosts/codex'))
        .map((f) => JSON.parse(fs.readFileSync(path.join(m.knowledge, '.state/hosts/codex', f), 'utf8')));
      expect(states.map((s) => s.routing?.version)).toEqual(['v2']);
    },
  );
});
