import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {GITIGNORE_GENERATIONS} from '../../src/store/index.js';
import {useTrees} from '../helpers/pipeline.js';
import {treeHash, writeSource} from '../helpers/tree.js';

// A failed command changes nothing, not even housekeeping.
const tree = useTrees();

describe('failed commands change nothing', () => {
  it('a failing reject sweeps no temporary file', () => {
    const t = tree();
    const leftover = t.file('.active.json.autoctx-abc123.tmp');
    fs.writeFileSync(leftover, '{');
    const before = treeHash(t.knowledge);
    const r = t.cli(['reject', t.baseline, '--rationale', 'the active bundle cannot be rejected']);
    expect([r.status, r.json.error.code]).toEqual([2, 'INVALID_TRANSITION']);
    expect(treeHash(t.knowledge)).toBe(before);
    expect(fs.existsSync(leftover)).toBe(true);
  });

  it('a failing init does not rewrite an outdated .gitignore', () => {
    const t = tree();
    const file = path.join(t.knowledge, '.gitignore');
    const later = GITIGNORE_GENERATIONS.slice(1).flat();
    fs.writeFileSync(
      file,
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => !later.includes(l))
        .join('\n'),
    );
    const before = treeHash(t.knowledge);
    const other = writeSource(path.join(t.dir, 'other'), {'playbook/playbook.md': 'something else\n'});
    const r = t.cli(['init', '--scenario', 'demo', '--from', other]);
    expect([r.status, r.json.error.code]).toEqual([2, 'ALREADY_INITIALIZED']);
    expect(treeHash(t.knowledge)).toBe(before);
  });
});
