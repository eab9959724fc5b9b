import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {ERROR_CODES, EXIT} from '../../src/errors.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

describe('a checkout that was never built', () => {
  it('bin/run.js without dist/ says so in one line, NOT_BUILT, exit 9, and no stack', () => {
    const dir = tempDir('autoctx-unbuilt-');
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.copyFileSync(path.join(PROJECT_ROOT, 'bin/run.js'), path.join(dir, 'bin/run.js'));
    fs.copyFileSync(path.join(PROJECT_ROOT, 'package.json'), path.join(dir, 'package.json'));
    const r = spawnSync(process.execPath, [path.join(dir, 'bin/run.js'), 'status'], {encoding: 'utf8'});
    expect([r.status, r.stdout, r.stderr.trim().split('\n')]).toEqual([
      9,
      '',
      [expect.stringMatching(/^error NOT_BUILT: .*npm run build$/)],
    ]);
    expect(ERROR_CODES.NOT_BUILT).toBe(EXIT.ENVIRONMENT);
    fs.rmSync(dir, {recursive: true, force: true});
  });
});
