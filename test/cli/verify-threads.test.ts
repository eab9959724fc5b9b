import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {init} from '../../src/core/init.js';
import {propose} from '../../src/core/propose.js';
import {verify} from '../../src/core/verify.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, writeSource} from '../helpers/tree.js';

// `autoctx verify` checks a large scenario's manifests on two threads. Whatever the split, its
// answer must be the one-thread answer: the same errors, warnings and counts, in the same order.

describe('verify on two threads', () => {
  it('gives the answer of one thread, on a clean tree and on one damaged in both halves', async () => {
    const dir = tempDir();
    const knowledge = path.join(dir, 'knowledge');
    const source = (i: number) => writeSource(path.join(dir, `src-${i}`), {'playbook/playbook.md': `Step ${i}: check the disk.\n`, 'hints/hints.md': `Hint ${i}.\n`});
    await init({knowledge, scenario: 'demo', from: source(0)});
    for (let i = 1; i < 12; i++) await propose({knowledge, from: source(i), runId: `r${i}`});

    const answers = () => {
      const inProcess = verify({knowledge});
      const one = runCli(['verify', '--knowledge', knowledge, '--json'], {env: {AUTOCTX_VERIFY_THREADS: '1'}});
      const two = runCli(['verify', '--knowledge', knowledge, '--json'], {env: {AUTOCTX_VERIFY_THREADS: '2'}});
      return {inProcess, one, two};
    };
    const clean = answers();
    expect(clean.inProcess).toMatchObject({status: 'ok', bundles_checked: 12, errors: []});
    expect([clean.one.status, clean.two.status]).toEqual([0, 0]);
    expect(clean.two.json).toEqual(clean.one.json);
    expect(clean.two.json).toEqual(JSON.parse(JSON.stringify(clean.inProcess)));

    // Damage manifests that fall to each thread (the digests are split alternately, in order).
    const bundles = path.join(knowledge, 'demo/context_bundles/bundles');
    const names = fs.readdirSync(bundles).sort();
    const edit = (name: string, fn: (m: any) => void) => {
      const file = path.join(bundles, name);
      const m = JSON.parse(fs.readFileSync(file, 'utf8'));
      fn(m);
      fs.writeFileSync(file, JSON.stringify(m, null, 2));
    };
    edit(names[2]!, (m) => (m.components[0].content += ' (edited)'));
    edit(names[5]!, (m) => (m.extra = true));
    edit(names[7]!, (m) => delete m.components[1].digest);
    fs.writeFileSync(path.join(bundles, names[10]!), '{"truncated": ');
    const damaged = answers();
    expect(damaged.inProcess.errors.map((e) => e.file)).toEqual(expect.arrayContaining([2, 5, 7, 10].map((i) => `demo/context_bundles/bundles/${names[i]}`)));
    expect([damaged.one.status, damaged.two.status]).toEqual([8, 8]);
    expect(damaged.two.json).toEqual(damaged.one.json);
    expect(damaged.two.json).toEqual(JSON.parse(JSON.stringify(damaged.inProcess)));
  }, 60_000);
});
