import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {makeTree, evalArgs, fakeEnv, type Tree} from '../helpers/pipeline.js';
import {runCliProcess} from '../helpers/cli.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

// Nothing outside the root is read or written through the tree or its inputs;
// the file system cannot surprise (links, FIFOs, devices, oversized files, names).
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, {recursive: true, force: true})));
function tree(): Tree {
  const t = makeTree();
  dirs.push(t.dir);
  return t;
}
const secret = () => {
  const d = tempDir('autoctx-outside-');
  dirs.push(d);
  const f = path.join(d, 'shadow');
  fs.writeFileSync(f, 'root:$6$secret\n');
  return f;
};
/** Run the CLI as its own process, with a deadline: a FIFO must be refused, not read for ever. */
const run = (t: Tree, args: string[]) => {
  const tree = args[0] === 'bundle' && args[1] === 'build' ? [] : ['--knowledge', t.knowledge]; // build needs no tree
  const r = spawnSync(process.execPath, [path.join(process.cwd(), 'bin/run.js'), ...args, ...tree, '--json'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return {status: r.status, json, stderr: r.stderr, signal: r.signal};
};
const refused = (r: {status: number | null; json: any; signal: NodeJS.Signals | null}) => [
  r.signal,
  r.status,
  r.json?.error?.code,
];

describe('sources are never read through a link, a FIFO or a device', () => {
  it.each(['file', 'kind folder', 'source folder'] as const)(
    'a link as a component %s: propose and bundle build refuse it ' +
      'naming the link; nothing outside is read, the tree is unchanged',
    (where) => {
      const t = tree();
      const outside = secret();
      const src = writeSource(path.join(t.dir, 'src'), {
        'playbook/playbook.md': 'Be helpful.\n',
        'hints/hints.md': 'x\n',
      });
      let from = src;
      let link: string;
      if (where === 'file') {
        link = path.join(src, 'hints', 'shadow.md');
        fs.symlinkSync(outside, link);
      } else if (where === 'kind folder') {
        fs.rmSync(path.join(src, 'hints'), {recursive: true});
        link = path.join(src, 'hints');
        fs.symlinkSync(path.dirname(outside), link);
      } else {
        link = path.join(t.dir, 'src-link');
        fs.symlinkSync(src, link);
        from = link;
      }
      const before = treeHash(t.knowledge);
      for (const args of [
        ['propose', '--from', from],
        ['bundle', 'build', '--from', from],
      ]) {
        const r = run(t, args);
        expect([args[0], ...refused(r)]).toEqual([args[0], null, 2, 'INPUT_UNSAFE']);
        expect(r.json.error.message).toContain(link);
        expect(JSON.stringify(r.json)).not.toContain('secret');
      }
      expect(treeHash(t.knowledge)).toBe(before);
    },
  );

  it('a FIFO as --from or --fixtures is refused at once (exit 2), never read for ever', () => {
    const t = tree();
    const fifo = path.join(t.dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const c = t.propose('b', {'playbook/playbook.md': 'Be precise.\n'});
    const before = treeHash(t.knowledge);
    expect(refused(run(t, ['propose', '--from', fifo]))).toEqual([null, 2, 'INPUT_UNSAFE']);
    const args = evalArgs().map((x, i, all) => (all[i - 1] === '--fixtures' ? fifo : x));
    expect(refused(run(t, ['confirm', c, ...args]))).toEqual([null, 2, 'INPUT_UNSAFE']);
    expect(refused(run(t, ['propose', '--from', '/dev/zero']))).toEqual([null, 2, 'INPUT_UNSAFE']);
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it('a component file over the 256 MiB input limit is refused before it is read', () => {
    const t = tree();
    const src = writeSource(path.join(t.dir, 'big'), {'playbook/playbook.md': 'x'});
    // sparse: nothing is written to disk
    fs.truncateSync(path.join(src, 'playbook/playbook.md'), 256 * 1024 * 1024 + 1);
    const r = run(t, ['propose', '--from', src]);
    expect(refused(r)).toEqual([null, 2, 'INPUT_TOO_LARGE']);
    expect(r.json.error.message).toContain('playbook.md');
  });
});

describe('keys of new material', () => {
  it('two keys of one kind equal after Unicode NFC are refused at propose; a key is never rewritten', () => {
    const t = tree();
    const nfc = 'caf\u00e9';
    const nfd = 'cafe\u0301';
    const src = path.join(t.dir, 'm.json');
    fs.writeFileSync(
      src,
      JSON.stringify({
        scenario: 'demo',
        evaluator_epoch: 'epoch-1',
        parent_digest: t.baseline,
        components: [
          {kind: 'hints', key: nfc, content: 'a', media_type: 'text/markdown'},
          {kind: 'hints', key: nfd, content: 'b', media_type: 'text/markdown'},
        ],
      }),
    );
    const before = treeHash(t.knowledge);
    const r = run(t, ['propose', '--from', src]);
    expect(refused(r)).toEqual([null, 2, 'DUPLICATE_COMPONENT']);
    expect(r.json.error.message).toMatch(/equal after Unicode NFC/);
    expect(treeHash(t.knowledge)).toBe(before);
    // One of them alone is kept exactly as written (not normalized).
    fs.writeFileSync(
      src,
      JSON.stringify({
        scenario: 'demo',
        evaluator_epoch: 'epoch-1',
        parent_digest: t.baseline,
        components: [{kind: 'hints', key: nfd, content: 'b', media_type: 'text/markdown'}],
      }),
    );
    const ok = run(t, ['propose', '--from', src]);
    expect(ok.status).toBe(0);
    expect(JSON.parse(t.read(`bundles/${ok.json.bundle_digest}.json`)).components[0].key).toBe(nfd);
  });

  it('a key whose materialized name would exceed 255 bytes is refused at propose', () => {
    const t = tree();
    const src = path.join(t.dir, 'm.json');
    fs.writeFileSync(
      src,
      JSON.stringify({
        scenario: 'demo',
        evaluator_epoch: 'epoch-1',
        parent_digest: t.baseline,
        components: [{kind: 'hints', key: 'k'.repeat(260), content: 'a', media_type: 'text/markdown'}],
      }),
    );
    expect(refused(run(t, ['propose', '--from', src]))).toEqual([null, 2, 'KEY_TOO_LONG']);
  });
});

describe('writes never go through a link, and verify never skips one', () => {
  it(
    'bundle materialize into a folder holding the same manifest and a ' +
      'link to a file outside refuses, and the outside file is untouched',
    () => {
      const t = tree();
      const out = path.join(t.dir, 'out');
      expect(run(t, ['bundle', 'materialize', t.baseline, out]).status).toBe(0);
      const outside = secret();
      fs.rmSync(path.join(out, 'playbook', 'playbook.md'));
      fs.symlinkSync(outside, path.join(out, 'playbook', 'playbook.md'));
      const r = run(t, ['bundle', 'materialize', t.baseline, out]);
      expect(refused(r)).toEqual([null, 2, 'TARGET_UNSAFE']);
      expect(fs.readFileSync(outside, 'utf8')).toBe('root:$6$secret\n');
      const linked = path.join(t.dir, 'linked-out');
      fs.symlinkSync(path.dirname(outside), linked);
      expect(refused(run(t, ['bundle', 'materialize', t.baseline, linked]))).toEqual([null, 2, 'TARGET_UNSAFE']);
      expect(fs.readdirSync(path.dirname(outside))).toEqual(['shadow']);
    },
  );

  it(
    'a scenario folder that is a link out of the root: verify ' + 'fails naming it, never "verified: 0 scenario(s)"',
    () => {
      const t = tree();
      const elsewhere = path.join(tempDir('autoctx-elsewhere-'), 'knowledge');
      dirs.push(path.dirname(elsewhere));
      fs.renameSync(t.knowledge, elsewhere);
      fs.mkdirSync(t.knowledge);
      fs.symlinkSync(path.join(elsewhere, 'demo'), path.join(t.knowledge, 'demo'));
      const r = runCliProcess(['verify', '--knowledge', t.knowledge, '--json']);
      expect([
        r.status,
        r.json.status,
        r.json.errors.map((e: {code: string; file: string}) => `${e.code} ${e.file}`),
      ]).toEqual([8, 'failed', ['UNSAFE_PATH demo']]);
    },
  );
});

describe('an evaluation that reads fixtures through a link', () => {
  it("still works: inputs that are not bundle sources may be links (they are the user's own files)", () => {
    const t = tree();
    const c = t.propose('b', {
      'playbook/playbook.md': 'Be helpful and precise.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    const args = evalArgs();
    const i = args.indexOf('--fixtures');
    const link = path.join(t.dir, 'fixtures-link.jsonl');
    fs.symlinkSync(args[i + 1]!, link);
    args[i + 1] = link;
    expect(t.cli(['confirm', c, ...args], fakeEnv(t.dir)).json.status).toBe('confirmed');
  });
});
