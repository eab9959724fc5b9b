import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

// A user's clone has nothing beside it. The committed repository (HEAD: in CI, the submitted main) is
// cloned into an empty folder, and there the README's first command runs, then the parity suites and
// the browser-checked report suite. Its own temporary folder keeps it apart from this run's files.
const outer = tempDir('autoctx-clone-');
afterAll(() => fs.rmSync(outer, {recursive: true, force: true}));

const PARITY_AND_REPORT = [
  'test/install/self-contained.test.ts',
  'test/canonical/parity.test.ts',
  'test/stats/replay.test.ts',
  'test/stats/interval.test.ts',
  'test/stats/causal.test.ts',
  'test/cli/upstream-tree.test.ts',
  'test/cli/report.test.ts',
];

describe('a fresh clone in an empty folder', () => {
  it('installs, runs the example, and passes the parity and report suites with nothing beside it', () => {
    const repo = path.join(outer, 'autoctx');
    const tmp = path.join(outer, 'tmp');
    fs.mkdirSync(tmp);
    const env = {...process.env, NODE_OPTIONS: '', TMPDIR: tmp, CI: 'true', npm_config_loglevel: 'error'};
    const run = (cmd: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}) => {
      const r = spawnSync(cmd, args, {
        cwd,
        encoding: 'utf8',
        env: {...env, ...extra},
        timeout: 400_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      return {status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, error: r.error};
    };
    const tail = (s: string) => s.split('\n').slice(-25).join('\n');

    const clone = run('git', ['clone', '--quiet', '--no-hardlinks', PROJECT_ROOT, repo], outer);
    expect([clone.status, tail(clone.out)]).toEqual([0, expect.any(String)]);
    expect(fs.readdirSync(outer).sort()).toEqual(['autoctx', 'tmp']);

    const install = run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], repo);
    expect([install.status, tail(install.out)]).toEqual([0, expect.any(String)]);
    const example = run('npm', ['run', 'example'], repo);
    expect([example.status, tail(example.out)]).toEqual([0, expect.stringContaining('0 errors')]);

    const suites = run('npx', ['jest', '--maxWorkers=1', ...PARITY_AND_REPORT], repo, {
      NODE_OPTIONS: '--experimental-vm-modules',
    });
    expect([suites.status, tail(suites.out)]).toEqual([
      0,
      expect.stringContaining(`Test Suites: ${PARITY_AND_REPORT.length} passed, ${PARITY_AND_REPORT.length} total`),
    ]);
    expect(suites.out).not.toMatch(/skipped/);
  }, 900_000);
});
