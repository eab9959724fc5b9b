import {spawnSync} from 'node:child_process';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';

// The commands the quick start prints can be copied and run as they are, --knowledge included.
describe('the quick start', () => {
  it('prints commands that run as printed, from the project folder', () => {
    const env = {...process.env, NODE_OPTIONS: ''};
    const example = spawnSync(process.execPath, ['knowledge-example/run.js'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env,
    });
    expect(example.status).toBe(0);
    const printed = example.stdout
      .split('\n')
      .filter((l) => l.startsWith('$ '))
      .map((l) => l.slice(2));
    expect(printed.length).toBeGreaterThan(8);
    for (const line of printed) expect(line).toMatch(/^npx autoctx \S.* --knowledge knowledge-example\/knowledge$/);
    // Those that only read run again exactly as printed (through sh and npx); replay answers as the example saw it
    // (status, log and the files verify counts since moved on: the example rolls back at the end); the bootstrap
    // package and the recall give the same bytes again.
    for (const verb of ['status', 'log', 'verify', 'replay', 'bootstrap render', 'recall']) {
      const line = printed.find((l) => l.startsWith(`npx autoctx ${verb} `))!;
      const r = spawnSync('sh', ['-c', line], {cwd: PROJECT_ROOT, encoding: 'utf8', env});
      expect([line, r.status, r.stderr]).toEqual([line, 0, '']);
      const section = example.stdout.split(`$ ${line}\n`)[1]!.split('\n$ ')[0]!.split('\nDone in ')[0]!;
      if (verb === 'replay' || verb === 'bootstrap render' || verb === 'recall')
        expect([line, r.stdout.trim()]).toEqual([line, section.trim()]);
      // the note: signed, checked without the anchor
      else if (verb === 'verify')
        expect(r.stdout).toMatch(
          /^verified: 1 scenario\(s\), 3 bundles, \d+ files, 0 errors, 0 warnings(, 1 notes)?$/m,
        );
      else expect(r.stdout).toContain('bb5f26eda790');
    }
  }, 120_000);
});
