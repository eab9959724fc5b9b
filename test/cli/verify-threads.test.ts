import fs from 'node:fs';
import path from 'node:path';
import {MessageChannel, receiveMessageOnPort, Worker} from 'node:worker_threads';
import {describe, expect, it} from '@jest/globals';
import {init} from '../../src/core/common/init.js';
import {propose} from '../../src/core/promotion/propose.js';
import {verify} from '../../src/core/common/verify.js';
import fc from 'fast-check';
import {
  claimOutlines,
  FREE,
  LEFT,
  MAIN,
  packOutline,
  POSTED,
  unpackOutline,
  warmUp,
} from '../../src/store/kinds/bundle/bundle-fast.js';
import {COMPONENT_KINDS} from '../../src/model/bundle/kinds.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, writeSource} from '../helpers/tree.js';

// `autoctx verify` checks a large scenario's manifests on two threads, which take them from one
// queue. Whatever the split (the helper thread taking all it can, or none), its answer must be the
// one-thread answer: the same errors, warnings and counts, in the same order.

describe('verify on two threads', () => {
  it('gives the answer of one thread, on a clean tree and on one damaged in both halves', async () => {
    const dir = tempDir();
    const knowledge = path.join(dir, 'knowledge');
    const source = (i: number) =>
      writeSource(path.join(dir, `src-${i}`), {
        'playbook/playbook.md': `Step ${i}: check the disk.\n`,
        'hints/hints.md': `Hint ${i}.\n`,
      });
    await init({knowledge, scenario: 'demo', from: source(0)});
    for (let i = 1; i < 12; i++) await propose({knowledge, from: source(i), runId: `r${i}`});

    const answers = () => {
      const inProcess = verify({knowledge});
      const one = runCli(['verify', '--knowledge', knowledge, '--json'], {env: {AUTOCTX_VERIFY_THREADS: '1'}});
      const two = runCli(['verify', '--knowledge', knowledge, '--json'], {env: {AUTOCTX_VERIFY_THREADS: '2'}});
      const helper = runCli(['verify', '--knowledge', knowledge, '--json'], {env: {AUTOCTX_VERIFY_THREADS: 'helper'}});
      return {inProcess, one, two, helper};
    };
    const clean = answers();
    expect(clean.inProcess).toMatchObject({status: 'ok', bundles_checked: 12, errors: []});
    expect([clean.one.status, clean.two.status, clean.helper.status]).toEqual([0, 0, 0]);
    expect(clean.two.json).toEqual(clean.one.json);
    expect(clean.helper.json).toEqual(clean.one.json);
    expect(clean.two.json).toEqual(JSON.parse(JSON.stringify(clean.inProcess)));

    // Damage manifests (with 'helper', every one the helper reads: it hands the damaged ones back).
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
    expect(damaged.inProcess.errors.map((e) => e.file)).toEqual(
      expect.arrayContaining([2, 5, 7, 10].map((i) => `demo/context_bundles/bundles/${names[i]}`)),
    );
    expect([damaged.one.status, damaged.two.status, damaged.helper.status]).toEqual([8, 8, 8]);
    expect(damaged.two.json).toEqual(damaged.one.json);
    expect(damaged.helper.json).toEqual(damaged.one.json);
    expect(damaged.two.json).toEqual(JSON.parse(JSON.stringify(damaged.inProcess)));

    // Damage candidates as well, in both halves of the list: the main thread checks them out of order
    // (from the back whenever the helper has their manifests), and reports them in the list's order.
    const candidates = path.join(knowledge, 'demo/context_bundles/candidates');
    const listed = fs.readdirSync(candidates).sort();
    const rewrite = (file: string, fn: (v: any) => void) => {
      const v = JSON.parse(fs.readFileSync(file, 'utf8'));
      fn(v);
      fs.writeFileSync(file, `${JSON.stringify(v, null, 2)}\n`);
    };
    rewrite(path.join(candidates, listed[1]!, 'record.json'), (r) => (r.evaluator_epoch = 'another-epoch'));
    rewrite(path.join(candidates, listed[9]!, 'record.json'), (r) => (r.evaluator_epoch = 'another-epoch'));
    const withDiff = listed.filter((d) => fs.existsSync(path.join(candidates, d, 'manifest_diff.json')));
    rewrite(path.join(candidates, withDiff[3]!, 'manifest_diff.json'), (d) => (d.evaluator_epoch = 'another-epoch'));
    // A history that is a file, not a folder: a refusal inside that candidate's checks, which no longer skips the ones
    // after it.
    const history = path.join(candidates, listed[6]!, 'record_history');
    fs.rmSync(history, {recursive: true});
    fs.writeFileSync(history, 'not a folder\n');
    const both = answers();
    expect([both.one.status, both.two.status, both.helper.status]).toEqual([8, 8, 8]);
    expect(both.two.json).toEqual(both.one.json);
    expect(both.helper.json).toEqual(both.one.json);
    expect(both.two.json).toEqual(JSON.parse(JSON.stringify(both.inProcess)));
    const inCandidates = both.inProcess.errors
      .map((e) => e.file)
      .filter((f) => f.startsWith('demo/context_bundles/candidates/'));
    const order = inCandidates.map((f) => listed.indexOf(f.split('/')[3]!));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // Each is found, the one after the refused history (listed[9]) included.
    for (const d of [listed[1]!, withDiff[3]!, listed[6]!, listed[9]!])
      expect([d, inCandidates.some((f) => f.includes(d))]).toEqual([d, true]);
  }, 60_000);

  it('has a helper that checks the manifests it claims, hands ' +
    'back the damaged ones, and loads from both builds', async () => {
    const dir = tempDir();
    const knowledge = path.join(dir, 'knowledge');
    const source = (i: number) => writeSource(path.join(dir, `src-${i}`), {'playbook/playbook.md': `Step ${i}.\n`});
    await init({knowledge, scenario: 'demo', from: source(0)});
    for (let i = 1; i < 6; i++) await propose({knowledge, from: source(i), runId: `r${i}`});
    const bundles = path.join(fs.realpathSync(knowledge), 'demo/context_bundles/bundles');
    const names = fs.readdirSync(bundles).sort();
    const digests = names.map((n) => n.slice(0, 64));
    const files = names.map((n) => path.join(bundles, n));
    fs.writeFileSync(files[3]!, fs.readFileSync(files[3]!, 'utf8').replace('Step', 'Stop'));
    const expected = [0, 1, 2, 4, 5];
    const root = fs.realpathSync(knowledge);
    const queue = () => new Int32Array(new SharedArrayBuffer(4 * (digests.length + 1)));
    const claimed = (q: Int32Array, list: readonly string[]) => {
      const posted: number[] = [];
      claimOutlines(root, list, digests, q, (p) => {
        const [i, o] = unpackOutline(p);
        expect(o.digest).toBe(digests[i]);
        posted.push(i);
      });
      return posted;
    };
    // It takes them from the last one back, posts the outline of each that passed, and leaves the damaged one.
    const q = queue();
    expect(claimed(q, files)).toEqual([...expected].reverse());
    expect([...q.subarray(1)]).toEqual([POSTED, POSTED, POSTED, LEFT, POSTED, POSTED]);
    // One the main thread claimed, or one the walk did not find as a file (''), is not its to take.
    const taken = queue();
    Atomics.store(taken, 1 + 4, MAIN);
    expect(
      claimed(
        taken,
        files.map((f, i) => (i === 0 ? '' : f)),
      ),
    ).toEqual([5, 2, 1]);
    expect([...taken.subarray(1)]).toEqual([FREE, POSTED, POSTED, LEFT, MAIN, POSTED]);
    for (const build of ['dist/core/bundle/verify-worker.js', 'dist/bundle/verify-worker.js']) {
      const worker = new Worker(path.resolve(build));
      const {port1, port2} = new MessageChannel();
      const answer = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage({root, files, digests, queue: queue().buffer, port: port2}, [port2]);
      });
      await worker.terminate();
      // What it posted is on the port before its answer (as the main thread of verify takes it in).
      const posted: number[] = [];
      for (let m = receiveMessageOnPort(port1); m !== undefined; m = receiveMessageOnPort(port1))
        posted.push(unpackOutline(m.message)[0]);
      port1.close();
      expect([build, answer, posted]).toEqual([build, 'done', [...expected].reverse()]);
    }
  }, 60_000);

  it('passes outlines between the threads packed, and unpacks them as they were', () => {
    const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
    const text = fc.string({unit: 'binary', minLength: 1, maxLength: 12});
    const outline = fc.record({
      schema_version: fc.constant(1 as const),
      scenario: text,
      evaluator_epoch: text,
      parent_digest: fc.option(hex, {nil: null}),
      digest: hex,
      components: fc.array(
        fc.record({kind: fc.constantFrom(...COMPONENT_KINDS), key: text, media_type: text, digest: hex}),
        {maxLength: 8},
      ),
    });
    fc.assert(
      fc.property(fc.nat(), outline, (i, o) => {
        expect(unpackOutline(structuredClone(packOutline(i, o)))).toEqual([i, o]);
      }),
      {numRuns: 300, seed: 2031},
    );
  });

  it('warms the helper up until its work comes, and no longer', () => {
    let asked = 0;
    expect(warmUp(() => (++asked === 3 ? 'work' : undefined))).toBe('work');
    expect(asked).toBe(3);
    expect(warmUp(() => undefined)).toBeUndefined(); // nothing came: it stops on its own
  });
});
