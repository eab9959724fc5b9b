import {createHash} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {route} from '../../src/core/release/route.js';
import {runHook} from '../../src/hooks/run.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli} from '../helpers/cli.js';
import {evalArgs, fakeEnv} from '../helpers/pipeline.js';
import {tempDir, writeSource} from '../helpers/tree.js';
import {hookCase} from '../helpers/hook-case.js';

/**
 * Delivery follows routing, pinned per session, through the
 * hook's own entry as the hosts call it: a session in the canary's share gets the canary's
 * curated context, and keeps its bundle for the rest of the session when the
 * canary is pulled; a new session is routed afresh.
 */
const FIXTURES = path.join(PROJECT_ROOT, 'test/fixtures/hosts');
const ACTIVE_PLAYBOOK = 'Check the sync icon first.\n';
const CANARY_PLAYBOOK = 'Check the sync icon, then the quota page.\n';
let dir: string;
let template: string;

function must(knowledge: string, args: string[], env?: NodeJS.ProcessEnv) {
  const r = runCli([...args, '--knowledge', knowledge, '--json'], {env});
  if (r.status !== 0) throw new Error(`${args.join(' ')} → ${r.status}: ${r.stdout}${r.stderr}`);
  return r.json;
}

beforeAll(() => {
  dir = tempDir('autoctx-hook-routing-');
  template = path.join(dir, 'template');
  // Other components, so that recall's scores mean something (and are the same on both sides).
  const roles = {
    'routing_config/roles.json': '{"model_competitor": "small"}',
    'tool_guidance/search.md': 'Search the help centre before answering.\n',
    'hints/printers.md': 'Printers are out of scope.\n',
  };
  must(template, [
    'init',
    '--scenario',
    'demo',
    '--from',
    writeSource(path.join(dir, 'base'), {'playbook/playbook.md': ACTIVE_PLAYBOOK, ...roles}),
  ]);
  const canary = must(template, [
    'propose',
    '--from',
    writeSource(path.join(dir, 'cand'), {'playbook/playbook.md': CANARY_PLAYBOOK, ...roles}),
  ]).bundle_digest as string;
  must(template, ['confirm', canary, ...evalArgs()], fakeEnv(dir));
  const active = JSON.parse(fs.readFileSync(path.join(template, 'demo/context_bundles/active.json'), 'utf8'))
    .bundle_digest as string;
  // Both playbooks are tagged: the bundle that serves a session decides which of them it gets.
  for (const b of [active, canary])
    must(template, [
      'tag',
      'add',
      must(template, ['bundle', 'show', b]).manifest.components.find((c: {kind: string}) => c.kind === 'playbook')
        .digest,
    ]);
  must(template, ['release', 'name', 'v1', active]);
  must(template, ['release', 'name', 'v2', canary]);
  must(template, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 's']);
  must(template, [
    'release',
    'transition',
    'v2',
    '--to',
    'CANARY',
    '--canary-percent',
    '50',
    '--rationale',
    'half the sessions',
  ]);
}, 120_000);

const setup = (_host: string) => hookCase(dir, template);

/**
 * One hook run, on the hook's own entry (src/hooks/run.ts's runHook: the host's event on stdin, the environment, the
 * one
 * line it writes), in this process: what it delivers, or null. The hook as a process (exit 0, one line, the diagnostic
 * on stderr) is test/hooks/contract.test.ts's; here, which bundle's context a session gets.
 */
async function hook(
  host: string,
  event: 'session-start' | 'user-prompt-submit',
  s: ReturnType<typeof setup>,
  fields: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {},
): Promise<string | null> {
  const shape = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${host}.${event}.json`), 'utf8'));
  const all = {...s.env, ...env};
  // $AUTOCTX_USER is read from the process's own environment (src/hooks/host-io.ts's hookUser), as the hook sees it.
  const saved = process.env.AUTOCTX_USER;
  if (all.AUTOCTX_USER === undefined) delete process.env.AUTOCTX_USER;
  else process.env.AUTOCTX_USER = all.AUTOCTX_USER;
  let out = '';
  let result: Awaited<ReturnType<typeof runHook>>;
  try {
    result = await runHook([event, '--host', host], {
      stdin: JSON.stringify({...shape, cwd: s.project, ...fields}),
      env: all,
      write: (line) => {
        out += line;
      },
    });
  } finally {
    if (saved === undefined) delete process.env.AUTOCTX_USER;
    else process.env.AUTOCTX_USER = saved;
  }
  if (out === '') {
    // Nothing delivered: keep the hook's outcome for a failure to name.
    diagnostics.push(`${event} ${String(fields.session_id)}: ${JSON.stringify(result)}`);
    return null;
  }
  expect(out.endsWith('\n') && out.split('\n').length === 2).toBe(true);
  return JSON.parse(out).hookSpecificOutput.additionalContext as string;
}

const diagnostics: string[] = [];

/** The context a hook run delivered; a run that delivered nothing fails naming the hook's own diagnostic. */
async function delivered(...args: Parameters<typeof hook>): Promise<string> {
  const context = await hook(...args);
  if (context === null) throw new Error(`the hook delivered nothing: ${diagnostics.at(-1)}`);
  return context;
}

/** A session id routing puts in the canary (or outside it), as core/release/route (`autoctx route --session`) says. */
function sessionWhere(knowledge: string, inCanary: boolean, prefix: string): string {
  for (let i = 0; i < 200; i++) {
    const id = `${prefix}-${i}`;
    if ((route({knowledge, session: id}).state === 'CANARY') === inCanary) return id;
  }
  throw new Error('no such session in 200 tries');
}

const hostState = (knowledge: string, host: string, session: string) =>
  JSON.parse(
    fs.readFileSync(
      path.join(knowledge, '.state/hosts', host, `${createHash('sha256').update(session).digest('hex')}.json`),
      'utf8',
    ),
  );

describe.each(['claude-code', 'codex'])('%s: delivery follows routing, pinned per session', (host) => {
  it(
    "gives a canary session the canary's curated context and an ACTIVE " +
      'session the active one, recorded with the receipt and the host state',
    async () => {
      const s = setup(host);
      const inside = sessionWhere(s.knowledge, true, 'in');
      const outside = sessionWhere(s.knowledge, false, 'out');
      const canary = await delivered(host, 'session-start', s, {session_id: inside, source: 'startup'});
      expect(canary).toContain(CANARY_PLAYBOOK.trim());
      expect(canary).not.toContain(ACTIVE_PLAYBOOK.trim());
      const active = await delivered(host, 'session-start', s, {session_id: outside, source: 'startup'});
      expect(active).toContain(ACTIVE_PLAYBOOK.trim());
      expect(active).not.toContain(CANARY_PLAYBOOK.trim());
      expect(hostState(s.knowledge, host, inside).routing).toMatchObject({
        version: 'v2',
        state: 'CANARY',
        reason: 'canary',
      });
      expect(hostState(s.knowledge, host, outside).routing).toMatchObject({version: 'v1', state: 'ACTIVE'});
      const receipts = fs
        .readdirSync(path.join(s.knowledge, '.state/bootstrap/receipts'))
        .map((f) => JSON.parse(fs.readFileSync(path.join(s.knowledge, '.state/bootstrap/receipts', f), 'utf8')));
      expect(receipts.map((r) => r.routing.version).sort()).toEqual(['v1', 'v2']);
    },
  );

  it(
    'keeps a session on its bundle when the canary is ' + 'pulled mid-session; a new session is routed afresh',
    async () => {
      const s = setup(host);
      const inside = sessionWhere(s.knowledge, true, 'pin');
      expect(await delivered(host, 'session-start', s, {session_id: inside, source: 'startup'})).toContain(
        CANARY_PLAYBOOK.trim(),
      );
      must(s.knowledge, ['release', 'transition', 'v2', '--to', 'DEPRECATED', '--rationale', 'pull the canary']);
      // The prompts, and a cleared context, of the same session: still the canary's bundle. (The first prompt
      // drops what the session start delivered whole, so the playbook comes back from the second.)
      const first = await hook(host, 'user-prompt-submit', s, {session_id: inside, prompt: 'the quota page'});
      expect(first ?? '').not.toContain(ACTIVE_PLAYBOOK.trim());
      const second = await delivered(host, 'user-prompt-submit', s, {
        session_id: inside,
        prompt: 'check the sync icon, then the quota page',
      });
      expect(second).toContain(CANARY_PLAYBOOK.trim());
      expect(second).not.toContain(ACTIVE_PLAYBOOK.trim());
      expect(await delivered(host, 'session-start', s, {session_id: inside, source: 'clear'})).toContain(
        CANARY_PLAYBOOK.trim(),
      );
      // The same id would be in the share, but there is no canary now: a new session gets ACTIVE.
      expect(await delivered(host, 'session-start', s, {session_id: `${inside}-new`, source: 'startup'})).toContain(
        ACTIVE_PLAYBOOK.trim(),
      );
      expect(must(s.knowledge, ['route', '--session', inside]).state).toBe('ACTIVE');
    },
  );

  it(
    'keeps a session on its ACTIVE bundle through an ordinary rollback, and ' +
      'moves it at the next hook after an emergency rollback of that bundle',
    async () => {
      const s = setup(host);
      must(s.knowledge, ['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'go']);
      const session = 'rolled-back-session';
      expect(await delivered(host, 'session-start', s, {session_id: session, source: 'startup'})).toContain(
        CANARY_PLAYBOOK.trim(),
      );
      must(s.knowledge, ['rollback', '--rationale', 'ordinary']);
      const pinned = await hook(host, 'user-prompt-submit', s, {
        session_id: session,
        prompt: 'check the sync icon first',
      });
      expect(pinned ?? '').not.toContain(ACTIVE_PLAYBOOK.trim());
      expect(hostState(s.knowledge, host, session).routing).toMatchObject({version: 'v2'});
      must(s.knowledge, ['rollback', '--rationale', 'forward again']);
      must(s.knowledge, ['rollback', '--emergency', '--rationale', 'v2 leaks', '--actor', 'oncall']);
      const after = await delivered(host, 'user-prompt-submit', s, {
        session_id: session,
        prompt: 'check the sync icon first',
      });
      expect(after).toContain(ACTIVE_PLAYBOOK.trim());
      expect(after).not.toContain(CANARY_PLAYBOOK.trim());
      expect(await delivered(host, 'session-start', s, {session_id: session, source: 'clear'})).toContain(
        ACTIVE_PLAYBOOK.trim(),
      );
    },
  );

  it(
    "moves a session off its pinned canary when the canary's " + 'bundle is rejected: a rejected bundle never serves',
    async () => {
      const s = setup(host);
      const inside = sessionWhere(s.knowledge, true, 'rejected');
      expect(await delivered(host, 'session-start', s, {session_id: inside, source: 'startup'})).toContain(
        CANARY_PLAYBOOK.trim(),
      );
      must(s.knowledge, [
        'reject',
        must(s.knowledge, ['release', 'show', 'v2']).descriptor.bundle_digest,
        '--rationale',
        'it leaks',
      ]);
      const after = await delivered(host, 'session-start', s, {session_id: inside, source: 'clear'});
      expect(after).toContain(ACTIVE_PLAYBOOK.trim());
      expect(after).not.toContain(CANARY_PLAYBOOK.trim());
      expect(hostState(s.knowledge, host, inside).routing).toMatchObject({version: 'v1', state: 'ACTIVE'});
    },
  );

  it(
    'moves a session off its pinned canary when a promotion ends ' +
      'that canary as stale; a canary pulled by hand keeps its sessions',
    async () => {
      const s = setup(host);
      const inside = sessionWhere(s.knowledge, true, 'stale');
      expect(await delivered(host, 'session-start', s, {session_id: inside, source: 'startup'})).toContain(
        CANARY_PLAYBOOK.trim(),
      );
      // Another candidate, confirmed against v1 as well, is promoted: v2's evidence (a comparison with v1) is stale,
      // its
      // canary ended.
      const roles = {
        'routing_config/roles.json': '{"model_competitor": "small"}',
        'tool_guidance/search.md': 'Search the help centre before answering.\n',
        'hints/printers.md': 'Printers are out of scope.\n',
      };
      const next = must(s.knowledge, [
        'propose',
        '--from',
        writeSource(path.join(path.dirname(s.knowledge), `next-${host}`), {
          'playbook/playbook.md': 'Check the sync icon, then restart.\n',
          ...roles,
        }),
      ]).bundle_digest as string;
      must(s.knowledge, ['confirm', next, ...evalArgs()], fakeEnv(path.dirname(s.knowledge)));
      must(s.knowledge, [
        'tag',
        'add',
        must(s.knowledge, ['bundle', 'show', next]).manifest.components.find(
          (c: {kind: string}) => c.kind === 'playbook',
        ).digest,
      ]);
      must(s.knowledge, ['promote', next]);
      expect(
        must(s.knowledge, ['release', 'show', 'v2']).states.find((x: {scope: string}) => x.scope === 'global').state,
      ).toBe('DEPRECATED');
      const after = await delivered(host, 'session-start', s, {session_id: inside, source: 'clear'});
      expect(after).toContain('Check the sync icon, then restart.');
      expect(after).not.toContain(CANARY_PLAYBOOK.trim());
      expect(hostState(s.knowledge, host, inside).routing).toMatchObject({bundle_digest: next, state: 'ACTIVE'});
    },
  );

  it(
    'routes by the registry in force when the file lags its ' +
      'receipt (a transition cut short), and pins that choice',
    async () => {
      const s = setup(host);
      must(s.knowledge, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'back to shadow']);
      const args = [
        'release',
        'transition',
        'v2',
        '--to',
        'CANARY',
        '--canary-percent',
        '100',
        '--rationale',
        'everyone',
      ];
      const probe = path.join(tempDir('autoctx-hook-probe-'), 'knowledge');
      fs.cpSync(s.knowledge, probe, {recursive: true});
      const trace = path.join(path.dirname(probe), 'trace');
      must(probe, args, {AUTOCTX_FAULT_TRACE: trace});
      const point = fs
        .readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '))
        // the receipt, named by its digest
        .find(([p, file]) => p!.endsWith(':after') && /^[0-9a-f]{64}\.json$/.test(file!))![0]!;
      expect(runCli([...args, '--knowledge', s.knowledge, '--json'], {env: {AUTOCTX_FAULT: point}}).status).toBeNull();
      // The file still says SHADOW; the receipt, which every reader takes, says a 100% CANARY.
      expect(
        JSON.parse(
          fs.readFileSync(path.join(s.knowledge, 'demo/context_bundles/releases/registry/global.json'), 'utf8'),
        ).releases.v2.state,
      ).toBe('SHADOW');
      const context = await delivered(host, 'session-start', s, {session_id: 'behind', source: 'startup'});
      expect(context).toContain(CANARY_PLAYBOOK.trim());
      expect(hostState(s.knowledge, host, 'behind').routing).toMatchObject({version: 'v2', state: 'CANARY'});
    },
  );

  it('routes by the user when $AUTOCTX_USER names one, before the session id', async () => {
    const s = setup(host);
    const user = (() => {
      for (let i = 0; i < 200; i++)
        if (route({knowledge: s.knowledge, user: `u-${i}`}).state === 'CANARY') return `u-${i}`;
      throw new Error('no canary user');
    })();
    const outside = sessionWhere(s.knowledge, false, 'user');
    expect(
      await delivered(host, 'session-start', s, {session_id: outside, source: 'startup'}, {AUTOCTX_USER: user}),
    ).toContain(CANARY_PLAYBOOK.trim());
    expect(hostState(s.knowledge, host, outside).routing).toMatchObject({version: 'v2', state: 'CANARY'});
  });
});
