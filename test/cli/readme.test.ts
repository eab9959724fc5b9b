import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';

// What the README promises a new user on its first screen, and the facts it states that users trip over.
const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');

describe('README', () => {
  it('opens with the same two commands', () => {
    expect(readme.split('\n').slice(2, 6).join('\n')).toBe(
      '```sh\n' +
        'npm ci && npm run example      # install, then run the quick start on knowledge-example/\n' +
        'npm test                       # type-check and run the whole test suite\n' +
        '```',
    );
  });

  it('recommends a global install or a package.json script for daily use before its first npx example', () => {
    const advice = readme.indexOf('for daily use, install\nautoctx globally');
    expect(advice).toBeGreaterThan(0);
    expect(readme.indexOf('`package.json` script')).toBeGreaterThan(0);
    expect(advice).toBeLessThan(readme.indexOf('npx autoctx init'));
  });

  it('says the playbook mirror is written for the key playbook only', () => {
    expect(readme).toContain('playbook/support.md is never mirrored');
  });
});
