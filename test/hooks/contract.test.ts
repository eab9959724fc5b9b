import {spawn, spawnSync} from 'node:child_process';
import {createHash} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {hookOutputLine} from '../../src/hooks/host-io.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';
import {hookCase, type HookCase} from '../helpers/hook-case.js';

/**
 * The hook as the hosts run it: bin/autoctx-hook.js as its own process, the
 * host's JSON on stdin (the shapes of agent-hosts-and-release-anchors.md
 * §1.3, in test/fixtures/hosts/), settings from a per-user configuration.
 */
const HOOK = path.join(PROJECT_ROOT, 'bin/autoctx-hook.js');
const FIXTURES = path.join(PROJECT_ROOT, 'test/fixtures/hosts');
let dir: string;
let template: string;

beforeAll(() => {
  dir = tempDir('autoctx-hooks-');
  template = path.join(dir, 'template');
  const src = writeSource(path.join(dir, 'src'), {
    'playbook/playbook.md': 'Check the sync icon first.\n',
    'hints/hints.md': 'Quota warnings come from the account page.\n',
    'tool_guidance/search.md': 'Search the help centre before answering.\n',
  });
  expect(runCli(['init', '--scenario', 'demo', '--from', src, '--knowledge', template]).status).toBe(0);
  const active = JSON.parse(
    fs.readFileSync(path.join(template, 'demo/context_bundles/active.json'), 'utf8'),
  ).bundle_digest;
  const components = runCli(['bundle', 'show', active, '--knowledge', template, '--json']).json.manifest
    .components as Array<{kind: string; digest: string}>;
  for (const kind of ['playbook', 'hints'])
    expect(
      runCli(['tag', 'add', components.find((c) => c.kind === kind)!.digest, '--knowledge', template]).status,
    ).toBe(0);
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

type Setup = HookCase;
const setup = (settings: Record<string, unknown> = {}, config?: string): Setup =>
  hookCase(dir, template, settings, config);

function fixture(host: string, event: string, s: Setup, extra: Record<string, unknown> = {}): string {
  const shape = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${host}.${event}.json`), 'utf8'));
  return JSON.stringify({...shape, cwd: s.project, ...extra});
}

function hook(args: string[], stdin: string, env: NodeJS.ProcessEnv) {
  const started = Date.now();
  const r = spawnSync(process.execPath, [HOOK, ...args], {input: stdin, encoding: 'utf8', env});
  return {status: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started};
}

function injected(stdout: string, event: string): string {
  expect(stdout.endsWith('\n')).toBe(true);
  expect(stdout.split('\n')).toHaveLength(2);
  const out = JSON.parse(stdout);
  expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
  expect(Object.keys(out.hookSpecificOutput)).toEqual(['hookEventName', 'additionalContext']);
  expect(out.hookSpecificOutput.hookEventName).toBe(event);
  expect(Buffer.byteLength(out.hookSpecificOutput.additionalContext, 'utf8')).toBeLessThanOrEqual(8192);
  return out.hookSpecificOutput.additionalContext as string;
}

const receipts = (k: string) => {
  const folder = path.join(k, '.state/bootstrap/receipts');
  return fs.existsSync(folder)
    ? fs.readdirSync(folder).map((f) => JSON.parse(fs.readFileSync(path.join(folder, f), 'utf8')))
    : [];
};

describe.each([
  ['claude-code', ['startup', 'resume', 'clear', 'compact', 'fork']],
  ['codex', ['startup', 'resume', 'clear', 'compact']],
])('%s', (host, sources) => {
  it.each(sources)(
    'session-start, source %s: injects the package once, exactly the one line the host accepts',
    (source) => {
      const s = setup();
      const r = hook(
        ['session-start', '--host', host],
        fixture(host, 'session-start', s, {source, session_id: `s-${source}`}),
        s.env,
      );
      expect({status: r.status, stderr: r.stderr}).toEqual({status: 0, stderr: ''});
      const context = injected(r.stdout, 'SessionStart');
      expect(context).toContain('Check the sync icon first.');
      expect(context).toContain('Quota warnings come from the account page.');
      expect(receipts(s.knowledge).map((x) => [x.state, x.lifecycle, x.integration])).toEqual([
        ['injected', source, host],
      ]);
    },
  );

  it(
    'a retried event prints nothing and keeps the saved receipt; ' +
      'the first prompt dedups against it and consumes it',
    () => {
      const s = setup();
      const start = fixture(host, 'session-start', s, {source: 'startup'});
      const first = hook(['session-start', '--host', host], start, s.env);
      injected(first.stdout, 'SessionStart');
      const again = hook(['session-start', '--host', host], start, s.env);
      expect(again).toMatchObject({status: 0, stdout: '', stderr: ''});
      // The prompt matches a delivered component and an undelivered one: only the undelivered is recalled.
      const prompt = fixture(host, 'user-prompt-submit', s, {prompt: 'search the help centre about quota warnings'});
      const p1 = hook(['user-prompt-submit', '--host', host], prompt, s.env);
      expect(p1.status).toBe(0);
      const recalled = injected(p1.stdout, 'UserPromptSubmit');
      expect(recalled).toContain('Search the help centre');
      expect(recalled).not.toContain('Quota warnings come from the account page.');
      // The receipt was consumed: the second prompt recalls the delivered component again.
      const p2 = hook(['user-prompt-submit', '--host', host], prompt, s.env);
      expect(injected(p2.stdout, 'UserPromptSubmit')).toContain('Quota warnings come from the account page.');
    },
  );

  it('a resume of a session that holds the package prints nothing, its receipt skipped; a clear delivers again', () => {
    const s = setup();
    injected(
      hook(['session-start', '--host', host], fixture(host, 'session-start', s, {source: 'startup'}), s.env).stdout,
      'SessionStart',
    );
    const resume = hook(
      ['session-start', '--host', host],
      fixture(host, 'session-start', s, {source: 'resume'}),
      s.env,
    );
    expect(resume).toMatchObject({status: 0, stdout: '', stderr: ''});
    expect(
      receipts(s.knowledge)
        .map((x) => [x.lifecycle, x.state, x.reason])
        .sort(),
    ).toEqual([
      ['resume', 'skipped', 'already_delivered'],
      ['startup', 'injected', null],
    ]);
    injected(
      hook(['session-start', '--host', host], fixture(host, 'session-start', s, {source: 'clear'}), s.env).stdout,
      'SessionStart',
    );
  });
});

/** Let others traverse every folder from the root down to `dir` that they may not; the folders and their modes. */
function openForOthers(dir: string): Array<[string, number]> {
  const changed: Array<[string, number]> = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const mode = fs.statSync(d).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      fs.chmodSync(d, mode | 0o001);
      changed.push([d, mode]);
    }
    if (path.dirname(d) === d) return changed;
  }
}

describe('the first prompt and a session start that has not finished', () => {
  it('waits briefly for it, then recalls without dedup', () => {
    const s = setup();
    // A session start that began a moment ago and has not reached its claim: its state, no receipt yet.
    const folder = path.join(s.knowledge, '.state/hosts/codex');
    fs.mkdirSync(folder, {recursive: true, mode: 0o700});
    const sid = 'still-starting';
    const file = path.join(folder, `${createHash('sha256').update(sid).digest('hex')}.json`);
    const now = new Date().toISOString().replace('Z', '000+00:00');
    fs.writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        scenario: 'demo',
        receipt_id: null,
        generation: 1,
        delivered_generation: null,
        last_event: {source: 'startup', generation: 1, at: now},
        updated_at: now,
      }),
      {mode: 0o600},
    );
    const r = hook(
      ['user-prompt-submit', '--host', 'codex'],
      fixture('codex', 'user-prompt-submit', s, {session_id: sid, prompt: 'quota warnings on the account page'}),
      s.env,
    );
    expect({status: r.status, stderr: r.stderr}).toEqual({status: 0, stderr: ''});
    expect(injected(r.stdout, 'UserPromptSubmit')).toContain('Quota warnings come from the account page.');
    expect(r.ms).toBeGreaterThanOrEqual(550); // it waited for the session start, up to 600 ms
  });
});

describe('failing open: nothing on stdout, exit 0, one content-free line on stderr', () => {
  const start = (s: Setup, extra: Record<string, unknown> = {}) =>
    fixture('claude-code', 'session-start', s, {source: 'startup', session_id: 'secret-session-id', ...extra});
  const diagnostic = (r: {stderr: string}) => {
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const d = JSON.parse(lines[0]!);
    expect(lines[0]).not.toMatch(/secret-session-id|\/tmp\/|Check the sync/);
    return d.outcome as string;
  };

  it('off by default and when disabled: nothing printed, nothing written, not even a diagnostic', () => {
    for (const s of [setup({enabled: false}), setup({enabled: undefined})]) {
      const before = treeHash(s.knowledge);
      expect(hook(['session-start', '--host', 'claude-code'], start(s), s.env)).toMatchObject({
        status: 0,
        stdout: '',
        stderr: '',
      });
      expect(treeHash(s.knowledge)).toBe(before);
    }
    const none = setup();
    const outside = {...none.env, XDG_CONFIG_HOME: path.join(dir, 'no-config')};
    expect(hook(['session-start', '--host', 'claude-code'], start(none), outside)).toMatchObject({
      status: 0,
      stdout: '',
      stderr: '',
    });
  });

  it('an empty package prints nothing', () => {
    const s = setup();
    fs.rmSync(path.join(s.knowledge, 'demo/context_bundles/bootstrap'), {recursive: true});
    expect(
      hook(['session-start', '--host', 'codex'], fixture('codex', 'session-start', s, {source: 'startup'}), s.env),
    ).toMatchObject({status: 0, stdout: '', stderr: ''});
  });

  it.each<[string, (s: Setup) => {stdin?: string; env?: NodeJS.ProcessEnv}, string]>([
    [
      'a malformed configuration',
      (s) => (fs.writeFileSync(path.join(s.env.XDG_CONFIG_HOME!, 'autoctx/config.json'), '{'), {}),
      'invalid_config',
    ],
    [
      'a relative knowledge root',
      (s) => (
        fs.writeFileSync(
          path.join(s.env.XDG_CONFIG_HOME!, 'autoctx/config.json'),
          JSON.stringify({schema_version: 1, hooks: {user: {knowledge: 'knowledge', scenario: 'demo', enabled: true}}}),
        ),
        {}
      ),
      'invalid_config',
    ],
    ['stdin that is not JSON', () => ({stdin: '{not json'}), 'invalid_input'],
    ['a session id with a control character', (s) => ({stdin: start(s, {session_id: 'a\u0001b'})}), 'invalid_input'],
    ['a session id with a line separator', (s) => ({stdin: start(s, {session_id: 'a\u2028b'})}), 'invalid_input'],
    ['stdin of another event', (s) => ({stdin: start(s, {hook_event_name: 'Stop'})}), 'invalid_input'],
    [
      'a source the host never sends',
      (s) => ({stdin: fixture('codex', 'session-start', s, {source: 'fork'})}),
      'invalid_input',
    ],
    ['a missing tree', (s) => (fs.rmSync(s.knowledge, {recursive: true}), {}), 'tree_unavailable'],
    [
      'a broken tree',
      (s) => (fs.writeFileSync(path.join(s.knowledge, 'demo/context_bundles/bootstrap/curation.json'), '{'), {}),
      'tree_broken',
    ],
  ])('%s', (_name, arrange, outcome) => {
    const s = setup();
    const {stdin, env} = arrange(s);
    const host = stdin?.includes('"model"') ? 'codex' : 'claude-code';
    const r = hook(['session-start', '--host', host], stdin ?? start(s), env ?? s.env);
    expect({status: r.status, stdout: r.stdout}).toEqual({status: 0, stdout: ''});
    expect(diagnostic(r)).toBe(outcome);
  });

  it('a state area the hook may not write: permission_denied, not internal', () => {
    const s = setup();
    const state = path.join(s.knowledge, '.state');
    // The hook runs as someone who may read the tree but not write its state area: as root, the user nobody (root
    // writes anywhere); otherwise this user, with the folder made read-only.
    const root = process.getuid?.() === 0;
    const caseRoot = path.dirname(s.knowledge);
    if (root) for (const d of [dir, caseRoot]) fs.chmodSync(d, 0o755);
    if (root) spawnSync('chmod', ['-R', 'a+rX', caseRoot]);
    else fs.chmodSync(state, 0o555);
    // nobody must reach the hook itself: a clone in a folder of mode 0700 (mktemp -d) is opened for the run.
    const opened = root ? openForOthers(PROJECT_ROOT) : [];
    try {
      const before = treeHash(s.knowledge);
      const command = root ? 'setpriv' : process.execPath;
      const args = [
        ...(root ? ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath] : []),
        HOOK,
        'session-start',
        '--host',
        'claude-code',
      ];
      const r = spawnSync(command, args, {input: start(s), encoding: 'utf8', env: s.env});
      expect({status: r.status, stdout: r.stdout}).toEqual({status: 0, stdout: ''});
      expect(diagnostic(r)).toBe('permission_denied');
      expect(treeHash(s.knowledge)).toBe(before);
    } finally {
      if (!root) fs.chmodSync(state, 0o755);
      fs.chmodSync(dir, 0o700);
      for (const [d, mode] of opened) fs.chmodSync(d, mode);
    }
  });

  it('a lock not had within the budget: nothing printed, exit 0, inside the budget', async () => {
    const s = setup({budget_ms: 400});
    // Another process holds the state area's lock for longer than the budget.
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
      const {KnowledgeStore} = await ` +
          `import(${JSON.stringify(path.join(PROJECT_ROOT, 'dist/store/index.js'))});
      await KnowledgeStore.open(${JSON.stringify(s.knowledge)}).state().withLock(5, () => { ` +
          `process.stdout.write('held\\n'); return new Promise((r) => setTimeout(r, 3000)); });`,
      ],
      {stdio: ['ignore', 'pipe', 'inherit']},
    );
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    const r = hook(['session-start', '--host', 'claude-code'], start(s), s.env);
    holder.kill();
    expect({status: r.status, stdout: r.stdout}).toEqual({status: 0, stdout: ''});
    expect(diagnostic(r)).toBe('locked');
    expect(r.ms).toBeLessThan(2500);
  });

  it('a session state file readable by others, or a link, is refused', () => {
    const s = setup();
    injected(hook(['session-start', '--host', 'claude-code'], start(s), s.env).stdout, 'SessionStart');
    const folder = path.join(s.knowledge, '.state/hosts/claude-code');
    const file = path.join(folder, fs.readdirSync(folder)[0]!);
    fs.chmodSync(file, 0o644);
    const r = hook(['session-start', '--host', 'claude-code'], start(s, {source: 'clear'}), s.env);
    expect({status: r.status, stdout: r.stdout}).toEqual({status: 0, stdout: ''});
    expect(diagnostic(r)).toBe('invalid_config');
    fs.rmSync(file);
    fs.symlinkSync('/etc/hostname', file);
    expect(diagnostic(hook(['session-start', '--host', 'claude-code'], start(s, {source: 'compact'}), s.env))).toBe(
      'invalid_config',
    );
  });

  it('never prints output a host would refuse or cut: over 8,192 bytes, over 10,000 characters, blank', () => {
    expect(hookOutputLine('SessionStart', 'x'.repeat(8192))).not.toBeNull();
    expect(hookOutputLine('SessionStart', 'x'.repeat(8193))).toBeNull();
    expect(hookOutputLine('SessionStart', '  \n')).toBeNull();
    expect(hookOutputLine('UserPromptSubmit', 'ok')).toBe(
      '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ok"}}\n',
    );
  });
});

describe("a host that never closes the hook's stdin", () => {
  /**
   * Run the hook with `input` written on stdin and stdin left open; how it ended, or null if it was still alive after
   * `waitMs`.
   */
  async function openStdin(args: string[], input: string, env: NodeJS.ProcessEnv, waitMs: number) {
    const child = spawn(process.execPath, [HOOK, ...args], {env, stdio: ['pipe', 'pipe', 'pipe']});
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += String(d)));
    child.stderr!.on('data', (d) => (stderr += String(d)));
    child.stdin!.on('error', () => {});
    if (input !== '') child.stdin!.write(input);
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c))),
      new Promise<'alive'>((resolve) => (timer = setTimeout(() => resolve('alive'), waitMs))),
    ]);
    clearTimeout(timer);
    const alive = code === 'alive';
    child.stdin!.end();
    if (alive) child.kill('SIGKILL');
    return alive ? null : {status: code, stdout, stderr};
  }

  // The hook's hard stop is under the host's 5 s timeout; 15 s leaves room for a loaded machine, and a hook that waits
  // for stdin to close never ends within it.
  it('does not wait for it: nothing sent, it says invalid_input and exits while stdin is still open', async () => {
    const s = setup();
    const r = await openStdin(['session-start', '--host', 'claude-code'], '', s.env, 15_000);
    expect(r).not.toBeNull();
    expect({status: r!.status, stdout: r!.stdout}).toEqual({status: 0, stdout: ''});
    expect(JSON.parse(r!.stderr.trim()).outcome).toBe('invalid_input');
  }, 30_000);

  it('does not wait for it: the whole event sent, it delivers and exits while stdin is still open', async () => {
    const s = setup();
    const r = await openStdin(
      ['session-start', '--host', 'codex'],
      fixture('codex', 'session-start', s, {source: 'startup'}),
      s.env,
      15_000,
    );
    expect(r).not.toBeNull();
    expect({status: r!.status, stderr: r!.stderr}).toEqual({status: 0, stderr: ''});
    expect(injected(r!.stdout, 'SessionStart')).toContain('Check the sync icon first.');
  }, 30_000);
});
