import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, writeSource} from '../helpers/tree.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

function cli(knowledge: string, args: string[]): Promise<{status: number | null; json: any}> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(PROJECT_ROOT, 'bin/run.js'), ...args, '--knowledge', knowledge, '--json'],
      {cwd: PROJECT_ROOT, env: {...process.env, NO_COLOR: '1'}, stdio: ['ignore', 'pipe', 'pipe']},
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({status, json: JSON.parse(out)}));
  });
}

describe('concurrent delivery', () => {
  it(
    'N concurrent prepares of one event make exactly one pending ' +
      'receipt; N concurrent injected claims, exactly one succeeds',
    async () => {
      const dir = tempDir('autoctx-receipts-');
      dirs.push(dir);
      const knowledge = path.join(dir, 'knowledge');
      const src = writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'Check the sync icon first.\n'});
      expect(runCli(['init', '--scenario', 'demo', '--from', src, '--knowledge', knowledge]).status).toBe(0);
      const show = runCli([
        'bundle',
        'show',
        runCli(['status', '--knowledge', knowledge, '--json']).json.scenarios[0].active.bundle_digest,
        '--knowledge',
        knowledge,
        '--json',
      ]);
      expect(runCli(['tag', 'add', show.json.manifest.components[0].digest, '--knowledge', knowledge]).status).toBe(0);
      const args = [
        'bootstrap',
        'prepare',
        '--integration',
        'codex',
        '--lifecycle',
        'startup',
        '--enabled',
        '--event-id',
        'thread-1',
      ];
      const prepared = await Promise.all(Array.from({length: 6}, () => cli(knowledge, args)));
      expect(prepared.map((p) => p.status)).toEqual(Array(6).fill(0));
      expect(new Set(prepared.map((p) => p.json.receipt.receipt_id)).size).toBe(1);
      expect(new Set(prepared.map((p) => p.json.package_digest)).size).toBe(1);
      expect(prepared.every((p) => p.json.status === 'ready' && p.json.receipt.state === 'pending')).toBe(true);
      expect(fs.readdirSync(path.join(knowledge, '.state/bootstrap/receipts'))).toHaveLength(1);
      const id = prepared[0]!.json.receipt.receipt_id;
      const claims = await Promise.all(
        Array.from({length: 6}, () => cli(knowledge, ['bootstrap', 'claim', id, '--outcome', 'injected'])),
      );
      expect(claims.map((c) => c.status).sort()).toEqual([0, 6, 6, 6, 6, 6]);
      expect(claims.filter((c) => c.status === 6).every((c) => c.json.error.code === 'RECEIPT_ALREADY_CLAIMED')).toBe(
        true,
      );
    },
  );
});
