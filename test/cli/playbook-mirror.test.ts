import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {runCliProcess} from '../helpers/cli.js';
import {tempDir, writeSource} from '../helpers/tree.js';

// The scenario's playbook.md (and hints.md) mirror only the components with those keys, playbook/playbook and
// hints/hints, as the README says: a playbook under another key is never mirrored.
describe('the playbook mirror', () => {
  it.each([
    ['playbook/playbook.md', true],
    ['playbook/support.md', false],
  ])('a baseline with %s has a playbook.md mirror: %s', (file, mirrored) => {
    const dir = tempDir('autoctx-mirror-');
    const src = writeSource(path.join(dir, 'src'), {[file]: 'Check the sync icon first.\n'});
    const knowledge = path.join(dir, 'knowledge');
    const r = runCliProcess(['init', '--scenario', 'demo', '--from', src, '--knowledge', knowledge]);
    expect(r.status).toBe(0);
    const mirror = path.join(knowledge, 'demo', 'playbook.md');
    expect(fs.existsSync(mirror)).toBe(mirrored);
    if (mirrored) expect(fs.readFileSync(mirror, 'utf8')).toBe('Check the sync icon first.\n');
  });
});
