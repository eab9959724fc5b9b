import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

const SIZE = 100 * 1024 * 1024;
const dir = tempDir('autoctx-memory-');
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

/** Run the CLI and return its exit code, JSON answer and peak resident memory in bytes. */
function measured(args: string[]): {status: number | null; json: any; peak: number} {
  const rss = path.join(dir, 'rss');
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      path.join(PROJECT_ROOT, 'test/helpers/max-rss.js'),
      path.join(PROJECT_ROOT, 'bin/run.js'),
      ...args,
      '--json',
    ],
    {
      encoding: 'utf8',
      env: {...process.env, AUTOCTX_MAX_RSS_FILE: rss},
      maxBuffer: 1 << 20,
    },
  );
  return {status: r.status, json: JSON.parse(r.stdout), peak: Number(fs.readFileSync(rss, 'utf8'))};
}

const lines: string[] = [];
afterAll(() => {
  process.stdout.write(`memory, 100 MiB component: ${lines.join('; ')}\n`);
});

/** About 100 MiB of whole lines. */
function textOf(line: string): Buffer {
  const one = Buffer.from(line);
  const out = Buffer.allocUnsafe(Math.floor(SIZE / one.length) * one.length);
  for (let at = 0; at < out.length; at += one.length) one.copy(out, at);
  return out;
}

describe('a bundle with a 100 MiB component', () => {
  it.each([
    // ASCII text with characters JSON must escape.
    ['ASCII text', 'Check the disk "before" restarting;\tnote what you saw \\ and why.\n'],
    // Mostly ASCII with a few characters beyond Latin-1: V8 then holds the whole text at two bytes a
    // character, twice the file's size, the hardest case for the 4x bound.
    ['text beyond Latin-1', 'Check the disk before restarting \u2014 note what you saw \u00e9 \u{1F600}\n'],
  ])(
    'of %s is proposed, materialized and verified with peak memory below 4x its size, and comes back byte for byte',
    (label, line) => {
      const root = path.join(dir, label.replace(/\W+/g, '-'));
      const k = path.join(root, 'knowledge');
      const base = path.join(root, 'base/playbook');
      const big = path.join(root, 'big/playbook');
      fs.mkdirSync(base, {recursive: true});
      fs.mkdirSync(big, {recursive: true});
      fs.writeFileSync(path.join(base, 'playbook.md'), 'Be helpful.\n');
      fs.writeFileSync(path.join(big, 'playbook.md'), textOf(line));
      const size = fs.statSync(path.join(big, 'playbook.md')).size;
      expect(measured(['init', '--scenario', 'demo', '--from', path.dirname(base), '--knowledge', k]).status).toBe(0);

      const proposed = measured(['propose', '--from', path.dirname(big), '--knowledge', k]);
      expect(proposed.status).toBe(0);
      const out = path.join(root, 'out');
      const materialized = measured(['bundle', 'materialize', proposed.json.bundle_digest, out, '--knowledge', k]);
      expect(materialized.status).toBe(0);
      const verified = measured(['verify', '--knowledge', k]);
      expect([verified.status, verified.json.errors]).toEqual([0, []]);

      // What comes out is what went in, and proposing it again gives the same digest.
      expect(
        fs.readFileSync(path.join(out, 'playbook/playbook.md')).equals(fs.readFileSync(path.join(big, 'playbook.md'))),
      ).toBe(true);
      expect(measured(['propose', '--from', out, '--knowledge', k]).json).toMatchObject({
        bundle_digest: proposed.json.bundle_digest,
        created: false,
      });

      const figures = [
        ['propose', proposed],
        ['materialize', materialized],
        ['verify', verified],
      ] as const;
      lines.push(
        `${label}: ${figures
          .map(([name, r]) => `${name} ${(r.peak / size).toFixed(2)}× ` + `(${Math.round(r.peak / 2 ** 20)} MiB)`)
          .join(', ')}`,
      );
      for (const [name, r] of figures) expect([name, r.peak < 4 * size]).toEqual([name, true]);
      fs.rmSync(root, {recursive: true, force: true});
    },
    180_000,
  );
});
