import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {runCliProcess} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

// `autocomplete script bash` alone gives a line that completes: it builds the completion cache when it is missing.
describe('autoctx autocomplete script', () => {
  it('builds the completion cache when it is missing, so the line it prints completes in a new shell', () => {
    const home = tempDir('autoctx-complete-');
    // NODE_ENV as an installed autoctx sees it (oclif warns about its own create command under NODE_ENV=test).
    const env = {HOME: home, XDG_CACHE_HOME: path.join(home, 'cache'), NODE_ENV: ''};
    const setup = path.join(home, 'cache', 'autoctx', 'autocomplete', 'bash_setup');
    const r = runCliProcess(['autocomplete', 'script', 'bash'], {env});
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(`AUTOCTX_AC_BASH_SETUP_PATH=${setup} && test -f`);
    expect(fs.existsSync(setup)).toBe(true);

    const bin = path.join(PROJECT_ROOT, 'bin', 'run.js');
    const shell = spawnSync(
      'bash',
      [
        '--norc',
        '--noprofile',
        '-c',
        `eval "$('${process.execPath}' '${bin}' autocomplete script bash)"; complete -p autoctx`,
      ],
      {encoding: 'utf8', env: {...process.env, ...env, NODE_OPTIONS: ''}},
    );
    expect(shell.status).toBe(0);
    expect(shell.stdout).toMatch(/^complete .*autoctx$/m);
  });
});
