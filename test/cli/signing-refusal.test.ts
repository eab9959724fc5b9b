import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {openScenario} from '../../src/core/common/store-options.js';
import {cliIn, mustIn} from '../helpers/knowledge-cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

/**
 * A signed scenario's state change with no key to sign it (SIGNING_KEY_REQUIRED, exit 2) is refused before the change
 * is made, and leaves knowledge/ byte for byte as it was: also when the command would first have changed another
 * scenario, and also when the step that meets the refusal goes on.
 */
/** No user config (so no configured key); the tests run without $AUTOCTX_SIGNING_KEY. */
const NO_KEY: NodeJS.ProcessEnv = {XDG_CONFIG_HOME: '/nonexistent-autoctx-config'};

/** A key pair and an allowed_signers file naming it as alice@x, in `dir`. */
function keys(dir: string): {key: string; signers: string} {
  const key = path.join(dir, 'key-alice');
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice', '-f', key], {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(r.stderr);
  const pub = fs.readFileSync(`${key}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  const signers = path.join(dir, 'allowed_signers');
  fs.writeFileSync(signers, `alice@x namespaces="autoctx" ${pub}\n`);
  return {key, signers};
}

/**
 * The tree the previous version wrote (histories named by position, which repair renames: files the signed chain
 * tracks), signed; and a scenario "alpha" before it, unsigned, whose mirror repair would write back.
 */
function twoScenarios(): {dir: string; knowledge: string; key: string} {
  const dir = tempDir('autoctx-signing-refusal-');
  const knowledge = path.join(dir, 'knowledge');
  fs.cpSync(path.join(PROJECT_ROOT, 'test/fixtures/seq-named-histories/knowledge'), knowledge, {recursive: true});
  for (const e of fs.readdirSync(knowledge, {recursive: true}) as string[]) {
    const p = path.join(knowledge, e);
    fs.chmodSync(p, fs.statSync(p).isDirectory() ? 0o755 : 0o644);
  }
  const {key, signers} = keys(dir);
  mustIn(knowledge, ['signing', 'start', '--from', signers, '--signing-key', key, '--actor', 'alice@x']);
  const src = writeSource(path.join(dir, 'alpha-src'), {'playbook/playbook.md': 'Alpha.\n'});
  mustIn(knowledge, ['init', '--scenario', 'alpha', '--from', src]);
  fs.rmSync(path.join(knowledge, 'alpha/playbook.md'));
  return {dir, knowledge, key};
}

describe('SIGNING_KEY_REQUIRED refuses before anything is written', () => {
  it(
    'repair of every scenario, one of them signed and no key: refused (exit 2, one line), ' +
      'and the unsigned scenario it would have repaired first is left as it was too',
    () => {
      const {knowledge, key} = twoScenarios();
      const before = treeHash(knowledge);
      const r = cliIn(knowledge, ['repair'], NO_KEY);
      expect([r.status, r.json?.error?.code, r.stdout.trim().split('\n').length]).toEqual([
        2,
        'SIGNING_KEY_REQUIRED',
        1,
      ]);
      expect(r.json.error.message).toContain('scenario "demo" is signed');
      expect(treeHash(knowledge)).toBe(before);
      expect(fs.existsSync(path.join(knowledge, 'alpha/playbook.md'))).toBe(false);
      // With the key, the same repair does both.
      const done = mustIn(knowledge, ['repair', '--signing-key', key]);
      expect(done.actions.join('\n')).toMatch(/renamed \d+ entries of demo\//);
      expect(fs.existsSync(path.join(knowledge, 'alpha/playbook.md'))).toBe(true);
    },
  );

  it(
    'a step that changes a file the chain tracks is refused before that file is ' +
      'written, and stays refused when the step goes on',
    async () => {
      const {knowledge} = twoScenarios();
      const before = treeHash(knowledge);
      const saved = {key: process.env.AUTOCTX_SIGNING_KEY, config: process.env.XDG_CONFIG_HOME};
      Object.assign(process.env, NO_KEY);
      delete process.env.AUTOCTX_SIGNING_KEY;
      try {
        // As a command without --signing-key opens it: its late signing finds no key.
        const store = openScenario({knowledge, scenario: 'demo'});
        const tracked = path.join(store.paths.contextDir, 'bootstrap/curation.json');
        const bytes = fs.readFileSync(tracked);
        let caught: string | null = null;
        let written: boolean | null = null;
        const step = store.withLock(1, () => {
          try {
            store.writer.replace(tracked, '{}\n');
          } catch (error) {
            caught = (error as {code?: string}).code ?? String(error);
          }
          written = !fs.readFileSync(tracked).equals(bytes);
        });
        await expect(step).rejects.toMatchObject({code: 'SIGNING_KEY_REQUIRED', exitCode: 2});
        expect([caught, written]).toEqual(['SIGNING_KEY_REQUIRED', false]);
      } finally {
        for (const [name, value] of [
          ['AUTOCTX_SIGNING_KEY', saved.key],
          ['XDG_CONFIG_HOME', saved.config],
        ] as const)
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
      }
      expect(treeHash(knowledge)).toBe(before);
    },
  );
});
