import {createHash} from 'node:crypto';
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {FIXTURES, PROJECT_ROOT} from '../helpers/paths.js';

// A user's clone has nothing beside it: every file a test reads lives in the repository, and the
// parity fixtures stay the exact bytes they were copied as (test/fixtures/README.md says from where).
describe('the repository is self-contained', () => {
  it('keeps every parity fixture byte for byte as copied, and no file is missing or added', () => {
    const listed = fs
      .readFileSync(path.join(PROJECT_ROOT, 'test/fixtures/upstream-autocontext.sha256'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => {
        const [digest, rel] = line.split(/ {2}/);
        return [rel!.replace(/^\.\//, ''), digest!] as const;
      });
    const onDisk = (fs.readdirSync(FIXTURES, {recursive: true, withFileTypes: true}) as fs.Dirent[])
      .filter((d) => d.isFile())
      .map((d) => path.relative(FIXTURES, path.join(d.parentPath, d.name)))
      .sort();
    expect(onDisk).toEqual(listed.map(([rel]) => rel).sort());
    for (const [rel, digest] of listed) {
      const actual = createHash('sha256')
        .update(fs.readFileSync(path.join(FIXTURES, rel)))
        .digest('hex');
      expect([rel, actual]).toEqual([rel, digest]);
    }
  });

  it('reads nothing outside the repository: no tracked file names the folder beside it', () => {
    const tracked = spawnSync('git', ['ls-files', '-z'], {cwd: PROJECT_ROOT, encoding: 'utf8'});
    expect(tracked.status).toBe(0);
    const sources = tracked.stdout
      .split('\0')
      .filter((f) => /\.(ts|js|cjs|mjs|json|sh)$/.test(f) || f === '.ci/run')
      .filter(
        (f) =>
          !f.startsWith('test/fixtures/') && f !== 'package-lock.json' && f !== 'test/install/self-contained.test.ts',
      );
    const offenders = sources.filter(
      (f) =>
        fs.existsSync(path.join(PROJECT_ROOT, f)) &&
        /\.\.\/shared\b/.test(fs.readFileSync(path.join(PROJECT_ROOT, f), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });
});
