import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, writeSource} from '../helpers/tree.js';
import {CASE_BUDGET_MS} from '../helpers/hook-case.js';

/**
 * The hook's session start killed before and after each of its durable
 * writes (the session state, the receipt, its claim, the saved receipt):
 * the host sees nothing or the whole line, every state file stays whole
 * and readable, and the next run of the session recovers: it prints the
 * package when nothing was claimed, and nothing after a claim (a kill
 * between the claim and the write loses that delivery, which the order the
 * issue sets accepts: claim before print).
 */
const root = tempDir('autoctx-hook-crash-');
afterAll(() => fs.rmSync(root, {recursive: true, force: true}));
// The most budget the configuration allows: what is asserted is delivery and recovery, not speed (see CASE_BUDGET_MS).
const HOOK = path.join(PROJECT_ROOT, 'bin/autoctx-hook.js');

function setup(name: string) {
  const dir = path.join(root, name);
  const knowledge = path.join(dir, 'knowledge');
  const src = writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'Check the sync icon first.\n'});
  expect(runCli(['init', '--scenario', 'demo', '--from', src, '--knowledge', knowledge]).status).toBe(0);
  const active = JSON.parse(
    fs.readFileSync(path.join(knowledge, 'demo/context_bundles/active.json'), 'utf8'),
  ).bundle_digest;
  const digest = runCli(['bundle', 'show', active, '--knowledge', knowledge, '--json']).json.manifest.components[0]
    .digest;
  expect(runCli(['tag', 'add', digest, '--knowledge', knowledge]).status).toBe(0);
  fs.mkdirSync(path.join(dir, 'config/autoctx'), {recursive: true});
  fs.writeFileSync(
    path.join(dir, 'config/autoctx/config.json'),
    JSON.stringify({
      schema_version: 1,
      hooks: {projects: {[dir]: {knowledge, scenario: 'demo', enabled: true, budget_ms: CASE_BUDGET_MS}}},
    }),
  );
  const stdin = JSON.stringify({
    session_id: 'crash-session',
    cwd: dir,
    hook_event_name: 'SessionStart',
    source: 'startup',
  });
  const env = (extra: NodeJS.ProcessEnv = {}) => ({
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    ...extra,
  });
  const hook = (extra?: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, [HOOK, 'session-start', '--host', 'claude-code'], {
      input: stdin,
      encoding: 'utf8',
      env: env(extra),
    });
  return {knowledge, hook};
}

describe('crash injection: the hook session start', () => {
  it('killed before and after every durable write, leaves whole files and a session that recovers', () => {
    const clean = setup('clean');
    const trace = path.join(root, 'trace');
    const r = clean.hook({AUTOCTX_FAULT_TRACE: trace});
    expect(r.stdout.startsWith('{"hookSpecificOutput"')).toBe(true);
    const points = fs
      .readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[0]!);
    expect(points.length).toBeGreaterThanOrEqual(8);
    const outcomes: string[] = [];
    for (const point of points) {
      const t = setup(`p-${point.replace(/\W/g, '-')}`);
      const crashed = t.hook({AUTOCTX_FAULT: point});
      expect([point, crashed.status]).toEqual([point, null]);
      // Nothing, or the whole line: never a part of it.
      expect([
        point,
        crashed.stdout === '' ||
          (crashed.stdout.endsWith('\n') && JSON.parse(crashed.stdout).hookSpecificOutput !== undefined),
      ]).toEqual([point, true]);
      // Every state file is whole JSON (an atomic write leaves the old file or the new one).
      const state = path.join(t.knowledge, '.state');
      const files = (fs.readdirSync(state, {recursive: true}) as string[])
        .map((f) => path.join(state, f))
        .filter((f) => fs.statSync(f).isFile() && f.endsWith('.json'));
      for (const f of files)
        expect([
          point,
          f,
          (() => {
            try {
              JSON.parse(fs.readFileSync(f, 'utf8'));
              return true;
            } catch {
              return false;
            }
          })(),
        ]).toEqual([point, f, true]);
      const receipts = () => {
        const d = path.join(state, 'bootstrap/receipts');
        // Receipts only: a temporary file a killed write left is not one (the next writer sweeps it).
        return fs.existsSync(d)
          ? fs
              .readdirSync(d)
              .filter((f) => /^bcr_[0-9a-f]{32}\.json$/.test(f))
              .map((f) => JSON.parse(fs.readFileSync(path.join(d, f), 'utf8')).state as string)
          : [];
      };
      const claimed = receipts().includes('injected');
      const again = t.hook();
      expect([point, again.status, again.stderr]).toEqual([point, 0, '']);
      // Not claimed: the retry delivers the same package. Claimed: it is not delivered twice.
      expect([point, again.stdout.startsWith('{"hookSpecificOutput"')]).toEqual([
        point,
        !claimed && crashed.stdout === '',
      ]);
      expect([point, receipts()]).toEqual([point, ['injected']]);
      outcomes.push(`${point}: ${claimed ? (crashed.stdout ? 'delivered' : 'claimed, not printed') : 'retried'}`);
    }
    process.stdout.write(
      `hook crash injection: ${outcomes.length} fault points\n${outcomes.map((o) => `  ${o}`).join('\n')}\n`,
    );
  });
});
