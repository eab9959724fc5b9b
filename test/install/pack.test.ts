import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

// Npm pack gives a package that installs and runs on a fresh machine. The package is
// installed as `npm install -g` installs it (into a prefix of its own), from the tarball alone, and
// run from another folder: nothing of the project folder is used.
const dir = tempDir('autoctx-pack-');
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));
const run = (cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: {...process.env, NODE_OPTIONS: '', ...env},
    timeout: 240_000,
  });
  return {status: r.status, stdout: r.stdout, stderr: r.stderr};
};

describe('the npm package', () => {
  it('packs, installs globally from the tarball, and runs init, status and verify from anywhere', () => {
    // dist/ is built by npm test before the suite; prepack (npm run build) is skipped here so that the suite's dist/ is
    // not rebuilt under it.
    const pack = run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir, '--json'], PROJECT_ROOT);
    expect([pack.status, pack.stderr]).toEqual([0, expect.any(String)]);
    const packed = (JSON.parse(pack.stdout) as Array<{filename: string; files: Array<{path: string}>}>)[0]!;
    const filename = packed.filename;
    const paths = packed.files.map((f: {path: string}) => f.path);
    for (const needed of [
      'bin/run.js',
      'dist/index.js',
      'dist/commands/confirm.js',
      'oclif.manifest.json',
      'schemas/manifest.schema.json',
      'package.json',
    ])
      expect([needed, paths.includes(needed)]).toEqual([needed, true]);
    expect(paths.some((p: string) => p.startsWith('src/') || p.startsWith('test/'))).toBe(false);

    const prefix = path.join(dir, 'global');
    const install = run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', path.join(dir, filename)],
      dir,
    );
    expect([install.status, install.stderr.includes('ERR!')]).toEqual([0, false]);
    const bin = path.join(prefix, 'bin', 'autoctx');
    expect(fs.existsSync(bin)).toBe(true);

    const work = path.join(dir, 'elsewhere');
    fs.mkdirSync(path.join(work, 'base', 'playbook'), {recursive: true});
    fs.writeFileSync(path.join(work, 'base', 'playbook', 'playbook.md'), 'Be helpful.\n');
    const version = run(bin, ['--version'], work);
    expect(version.stdout).toMatch(/^autoctx\/\d+\.\d+\.\d+ /);
    expect(run(bin, ['init', '--scenario', 'demo', '--from', 'base', '--json'], work).status).toBe(0);
    const status = JSON.parse(run(bin, ['status', '--json'], work).stdout);
    expect(status.scenarios[0].scenario).toBe('demo');
    expect(JSON.parse(run(bin, ['verify', '--json'], work).stdout)).toMatchObject({status: 'ok', errors: []});
    expect(run(bin, ['help', 'confirm'], work).stdout).toContain('--evaluator');
  }, 300_000);
});
