import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli} from '../helpers/cli.js';
import {evalArgs, fakeEnv} from '../helpers/pipeline.js';
import {tempDir, writeSource} from '../helpers/tree.js';
import {hookCase} from '../helpers/hook-case.js';

/**
 * The delivery-evidence loop, end to end through the hook as the hosts run it: a
 * confirmed candidate released as CANARY in a signed tree; the hook delivers
 * it to a canary session and seals the delivery; the inspection says PASS; a
 * delivery edited afterwards is inspected FAIL; an emergency rollback is
 * executed and approved by a second signer.
 */
const HOOK = path.join(PROJECT_ROOT, 'bin/autoctx-hook.js');
const FIXTURES = path.join(PROJECT_ROOT, 'test/fixtures/hosts');
const CANARY_PLAYBOOK = 'Check the sync icon, then the quota page.\n';
let dir: string;
let template: string;
let keys: string;
let anchor: string;

function must(knowledge: string, args: string[], env?: NodeJS.ProcessEnv) {
  const r = runCli([...args, '--knowledge', knowledge, '--json'], {env});
  if (r.status !== 0) throw new Error(`${args.join(' ')} → ${r.status}: ${r.stdout}${r.stderr}`);
  return r.json;
}
function keygen(name: string): string {
  const file = path.join(keys, name);
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file], {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(r.stderr);
  return fs.readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
}

beforeAll(() => {
  dir = tempDir('autoctx-loop-');
  keys = tempDir('autoctx-loop-keys-');
  anchor = path.join(keys, 'allowed_signers');
  fs.writeFileSync(
    anchor,
    `alice@x namespaces="autoctx" ${keygen('alice')}\nbob@x namespaces="autoctx,autoctx-approver" ${keygen('bob')}\n`,
  );
  template = path.join(dir, 'template');
  const roles = {
    'routing_config/roles.json': '{"model_competitor": "small"}',
    'hints/printers.md': 'Printers are out of scope.\n',
  };
  must(template, [
    'init',
    '--scenario',
    'demo',
    '--from',
    writeSource(path.join(dir, 'base'), {'playbook/playbook.md': 'Check the sync icon first.\n', ...roles}),
  ]);
  must(template, [
    'signing',
    'start',
    '--from',
    anchor,
    '--signing-key',
    path.join(keys, 'alice'),
    '--actor',
    'alice@x',
  ]);
  const canary = must(template, [
    'propose',
    '--from',
    writeSource(path.join(dir, 'cand'), {'playbook/playbook.md': CANARY_PLAYBOOK, ...roles}),
    '--signing-key',
    path.join(keys, 'alice'),
  ]).bundle_digest as string;
  must(template, ['confirm', canary, ...evalArgs(['--signing-key', path.join(keys, 'alice')])], fakeEnv(dir));
  const active = JSON.parse(fs.readFileSync(path.join(template, 'demo/context_bundles/active.json'), 'utf8'))
    .bundle_digest as string;
  for (const b of [active, canary])
    for (const c of must(template, ['bundle', 'show', b]).manifest.components as Array<{kind: string; digest: string}>)
      if (c.kind !== 'routing_config')
        must(template, ['tag', 'add', c.digest, '--signing-key', path.join(keys, 'alice')]);
  must(template, ['release', 'name', 'v1', active, '--signing-key', path.join(keys, 'alice')]);
  must(template, [
    'release',
    'name',
    'v2',
    canary,
    '--rollback-target',
    'v1',
    '--signing-key',
    path.join(keys, 'alice'),
  ]);
  must(template, [
    'release',
    'transition',
    'v2',
    '--to',
    'SHADOW',
    '--rationale',
    's',
    '--actor',
    'alice@x',
    '--signing-key',
    path.join(keys, 'alice'),
  ]);
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
    '--actor',
    'alice@x',
    '--signing-key',
    path.join(keys, 'alice'),
    '--allowed-signers',
    anchor,
  ]);
}, 120_000);

function hook(
  host: string,
  s: ReturnType<typeof hookCase>,
  fields: Record<string, unknown>,
  event: 'session-start' | 'user-prompt-submit' = 'session-start',
): string | null {
  const shape = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${host}.${event}.json`), 'utf8'));
  const r = spawnSync(process.execPath, [HOOK, event, '--host', host], {
    input: JSON.stringify({...shape, cwd: s.project, ...fields}),
    encoding: 'utf8',
    env: s.env,
  });
  expect(r.status).toBe(0);
  return r.stdout === '' ? null : (JSON.parse(r.stdout).hookSpecificOutput.additionalContext as string);
}

describe('the evidence loop', () => {
  it(
    'canary delivery sealed by the hook, inspected PASS; an edited ' +
      'delivery FAIL; an emergency rollback approved by a second signer',
    () => {
      const s = hookCase(dir, template);
      let session = '';
      for (let i = 0; i < 200 && session === ''; i++)
        if (must(s.knowledge, ['route', '--session', `loop-${i}`]).state === 'CANARY') session = `loop-${i}`;
      const delivered = hook('claude-code', s, {session_id: session, source: 'startup'})!;
      expect(delivered).toContain(CANARY_PLAYBOOK.trim());
      // The hook sealed exactly what it injected, with its receipt, the receipt id as the correlation id.
      const packages = path.join(s.knowledge, '.state/evidence');
      const files = (fs.readdirSync(packages, {recursive: true}) as string[]).filter(
        (f) => f.includes('packages') && f.endsWith('.json'),
      );
      expect(files).toHaveLength(1);
      const sealed = JSON.parse(fs.readFileSync(path.join(packages, files[0]!), 'utf8'));
      expect(fs.statSync(path.join(packages, files[0]!)).mode & 0o777).toBe(0o600);
      expect(sealed).toMatchObject({
        source: 'hook',
        package: {user_prompt: delivered, release_version: 'v2', layout: 'autoctx-bootstrap-v1'},
      });
      expect(sealed.package.correlation_id).toBe(sealed.package.metadata.receipt.receipt_id);
      expect(JSON.stringify(sealed)).not.toContain(session); // nothing else from the host
      const first = must(s.knowledge, ['inspect', 'run']);
      expect(first.inspected).toEqual([{package_id: sealed.package_id, verdict: 'PASS'}]);
      // The same delivery, edited, sealed as another host would: FAIL, naming the item.
      const edited = path.join(dir, 'edited.json');
      fs.writeFileSync(
        edited,
        JSON.stringify({
          ...sealed.package,
          correlation_id: 'edited-1',
          user_prompt: delivered.replace('quota page', 'billing page'),
        }),
      );
      const other = must(s.knowledge, ['evidence', 'seal', '--from', edited]);
      const second = must(s.knowledge, ['inspect', 'run']);
      expect(second.inspected).toEqual([{package_id: other.package_id, verdict: 'FAIL'}]);
      expect(must(s.knowledge, ['inspect', 'show', other.package_id]).inspection.findings[0]).toMatchObject({
        code: 'MISMATCH',
        subject: 'playbook/playbook',
      });
      expect(must(s.knowledge, ['status']).scenarios[0].evidence).toEqual({
        packages: 2,
        uninspected: 0,
        verdicts: {FAIL: 1, PASS: 1},
      });
      // Promote the canary, then an emergency rollback, signed by alice, approved by bob.
      must(s.knowledge, [
        'release',
        'transition',
        'v2',
        '--to',
        'ACTIVE',
        '--rationale',
        'go',
        '--signing-key',
        path.join(keys, 'alice'),
        '--allowed-signers',
        anchor,
        '--actor',
        'alice@x',
      ]);
      const rb = must(s.knowledge, [
        'rollback',
        '--emergency',
        '--rationale',
        'the quota page moved',
        '--actor',
        'alice@x',
        '--signing-key',
        path.join(keys, 'alice'),
      ]);
      expect(rb.execution_status).toBe('AWAITING_APPROVAL');
      must(s.knowledge, [
        'rollback',
        'approve',
        rb.execution_key,
        '--actor',
        'bob@x',
        '--signing-key',
        path.join(keys, 'bob'),
        '--allowed-signers',
        anchor,
      ]);
      expect(must(s.knowledge, ['rollback', 'show', rb.execution_key]).view.status).toBe('APPROVED');
      expect(must(s.knowledge, ['verify', '--allowed-signers', anchor]).errors).toEqual([]);
    },
  );

  it(
    "both hooks' deliveries (the bootstrap and the recalled " + 'package, each with its receipt) are inspected PASS',
    () => {
      const s = hookCase(dir, template);
      for (const host of ['claude-code', 'codex']) {
        const session = `both-${host}`;
        expect(hook(host, s, {session_id: session, source: 'startup'})).not.toBeNull();
        // The first prompt drops what the session start delivered whole; the second recalls it.
        hook(host, s, {session_id: session, prompt: 'the sync icon and the quota page'}, 'user-prompt-submit');
        const recalled = hook(
          host,
          s,
          {session_id: session, prompt: 'check the sync icon, then the quota page'},
          'user-prompt-submit',
        );
        expect(recalled).toContain('# autoctx recalled context');
      }
      const verdicts = (must(s.knowledge, ['inspect', 'run']).inspected as Array<{verdict: string}>).map(
        (i) => i.verdict,
      );
      expect(verdicts.length).toBeGreaterThanOrEqual(4);
      expect(verdicts.filter((v) => v !== 'PASS')).toEqual([]);
    },
  );
});
