import {spawn, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {runCli} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';

// Evaluators cannot wedge, hang, smuggle or change unseen.
const B = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

function setup(): {t: Tree; c: string; tmp: string; script: (name: string, body: string) => string} {
  const t = makeTree();
  dirs.push(t.dir);
  const tmp = path.join(t.dir, 'tmp'); // the runs' own TMPDIR: their evaluation folders are seen here alone
  fs.mkdirSync(tmp);
  const c = t.propose('b', B);
  const script = (name: string, body: string) => {
    const f = path.join(t.dir, name);
    fs.writeFileSync(f, `import fs from 'node:fs';\nconst req = JSON.parse(fs.readFileSync(0, 'utf8'));\n${body}\n`);
    return f;
  };
  return {t, c, tmp, script};
}
/**
 * confirm with a per-arm evaluator command, on the built CLI in this test process (test/helpers/cli.ts); with
 * `ownProcess`, as a process of its own, for what only a process shows (its process group, its pid, its timing).
 */
function confirm(t: Tree, c: string, evaluator: string, tmp: string, extra: string[] = [], ownProcess = false) {
  const args = evalArgs(extra, false).map((x, i, all) => (all[i - 1] === '--evaluator' ? evaluator : x));
  const started = Date.now();
  const line = ['confirm', c, ...args, '--knowledge', t.knowledge, '--json'];
  const env = {...fakeEnv(t.dir), TMPDIR: tmp};
  if (!ownProcess) {
    const r = runCli(line, {env});
    return {status: r.status, json: r.json, ms: Date.now() - started};
  }
  const r = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'bin/run.js'), ...line], {
    encoding: 'utf8',
    timeout: 60_000,
    env: {...process.env, ...env},
  });
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return {status: r.status, json, ms: Date.now() - started};
}
const pgrep = (pattern: string) => spawnSync('pgrep', ['-f', pattern], {encoding: 'utf8'}).stdout.trim();

describe('answers autoctx could not write and read back', () => {
  it.each([1e16, 1.5e308])(
    'a score of %s is refused before anything is recorded (EVALUATOR_FAILED, exit 8); the next run goes on',
    (score) => {
      const {t, c, tmp, script} = setup();
      const bad = script('bad.mjs', `process.stdout.write(JSON.stringify({score: ${score}}));`);
      const before = treeHash(t.knowledge);
      const r = confirm(t, c, `node ${bad}`, tmp);
      expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_FAILED']);
      expect(r.json.error.message).toMatch(/could be written but never read back/);
      expect(fs.existsSync(t.file(`candidates/${c}/matched_trials.json`))).toBe(false);
      expect(treeHash(t.knowledge)).not.toBe(before); // the plan was bound, and nothing else
      expect(t.cli(['verify']).json.errors).toEqual([]);
      expect(t.cli(['repair']).status).toBe(0);
      // Nothing is wedged: the same run fails the same clear way, and a mended script is another evaluator, refused
      // naming it.
      expect(confirm(t, c, `node ${bad}`, tmp).json.error.code).toBe('EVALUATOR_FAILED');
      fs.writeFileSync(
        bad,
        `import fs from 'node:fs';\nconst req = JSON.parse(fs.readFileSync(0, ` +
          `'utf8'));\nprocess.stdout.write(JSON.stringify({score: req.arm === 'candidate' ? 0.9 : 0.1}));\n`,
      );
      const mended = confirm(t, c, `node ${bad}`, tmp);
      expect([mended.json.error.code, mended.json.error.message]).toEqual([
        'EVALUATOR_CHANGED',
        expect.stringContaining('bad.mjs changed since the plan was bound'),
      ]);
      const d = t.propose('d', {...B, 'hints/hints.md': 'd\n'});
      expect(confirm(t, d, `node ${bad}`, tmp).json.status).toBe('confirmed');
    },
  );
});

describe('a failing evaluator is shown, not summed up by its last line', () => {
  it(
    'a Node stack trace: the error names the thrown error, and ' +
      'the last lines of stderr follow it (human and --json)',
    () => {
      const {t, c, tmp, script} = setup();
      const bad = script(
        'throws.mjs',
        `function deep() { throw new Error('no such fixture: ' + req.fixture); }\ndeep();`,
      );
      const r = confirm(t, c, `node ${bad}`, tmp);
      expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_FAILED']);
      // Not "Node.js v20…", the last line Node writes, but the line that says what went wrong.
      expect(r.json.error.message).toMatch(/^evaluator exited 1: Error: no such fixture: .+ on (candidate|incumbent) /);
      const tail: string[] = r.json.error.data.stderr_tail;
      expect(tail.some((l) => l.includes('at deep'))).toBe(true);
      expect(tail[tail.length - 1]).toMatch(/^Node\.js v/);
      expect(tail.length).toBeLessThanOrEqual(20);
      const human = spawnSync(
        process.execPath,
        [
          path.join(PROJECT_ROOT, 'bin/run.js'),
          'confirm',
          c,
          ...evalArgs([], false).map((x, i, all) => (all[i - 1] === '--evaluator' ? `node ${bad}` : x)),
          '--knowledge',
          t.knowledge,
        ],
        {encoding: 'utf8', env: {...process.env, ...fakeEnv(t.dir), TMPDIR: tmp, NO_COLOR: '1'}},
      );
      const lines = human.stderr.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^error EVALUATOR_FAILED: evaluator exited 1: Error: no such fixture/);
      expect(lines).toContain(`  the evaluator's stderr, last ${tail.length} lines:`);
      expect(lines.slice(-tail.length)).toEqual(tail.map((l) => `  | ${l}`));
    },
  );

  it('a long stderr is bounded: the last lines, each cut, the end kept', () => {
    const {t, c, tmp, script} = setup();
    const bad = script(
      'noisy.mjs',
      `for (let i = 0; i < 5000; i++) process.stderr.write('line ' + i + ' ' ` +
        `+ 'x'.repeat(i % 7 === 0 ? 900 : 10) + '\\n');\nprocess.exitCode = 3; ` +
        `// (process.exit would drop what is still buffered for the pipe)`,
    );
    const r = confirm(t, c, `node ${bad}`, tmp);
    const tail: string[] = r.json.error.data.stderr_tail;
    expect(tail.length).toBeLessThanOrEqual(20);
    expect(tail[tail.length - 1]).toMatch(/^line 4999 /);
    expect(tail.every((l) => l.length <= 301)).toBe(true);
    expect(r.json.error.message).toMatch(/^evaluator exited 3: line 4999 /);
  });
});

describe('timeouts are hard', () => {
  it('an evaluator whose setsid grandchild holds its stdout does not keep autoctx waiting past its timeout', () => {
    const {t, c, tmp} = setup();
    const marker = `${60 + Math.random()}`.slice(0, 8);
    const r = confirm(t, c, `setsid sleep ${marker} & exec sleep ${marker}`, tmp, ['--timeout', '1'], true);
    try {
      expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_FAILED']);
      expect(r.ms).toBeLessThan(10_000); // timeout 1 s, the group ended, pipes read for one more second at most
      expect(fs.readdirSync(tmp)).toEqual([]); // its evaluation folder went with it
    } finally {
      spawnSync('pkill', ['-f', `sleep ${marker}`]);
    }
  }, 30_000);

  it("Ctrl-C ends the evaluator's process group and removes the evaluation folder", async () => {
    const {t, c, tmp} = setup();
    const marker = `${70 + Math.random()}`.slice(0, 8);
    const args = evalArgs([], false).map((x, i, all) => (all[i - 1] === '--evaluator' ? `sleep ${marker}` : x));
    const child = spawn(
      process.execPath,
      [path.join(PROJECT_ROOT, 'bin/run.js'), 'confirm', c, ...args, '--knowledge', t.knowledge, '--json'],
      {env: {...process.env, TMPDIR: tmp}, stdio: 'ignore'},
    );
    // The evaluator itself (autoctx's own command line names it too, so match the process's start).
    for (let i = 0; pgrep(`^sleep ${marker}`) === ''; i++) {
      if (i > 200) throw new Error('the evaluator never started');
      await new Promise((r) => setTimeout(r, 50));
    }
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    const code = await exited;
    await new Promise((r) => setTimeout(r, 200));
    expect([code, pgrep(`^sleep ${marker}`), fs.readdirSync(tmp)]).toEqual([130, '', []]);
  }, 30_000);

  it('an evaluation folder a killed run left is removed by the next run, and one of a live run is kept', () => {
    const {t, c, tmp} = setup();
    const dead = path.join(tmp, 'autoctx-bundles-dead1');
    fs.mkdirSync(dead);
    fs.writeFileSync(
      path.join(dead, '.owner.json'),
      JSON.stringify({
        pid: 999999,
        hostname: os.hostname(),
        boot_id: null,
        start_time: null,
        nonce: 'x',
        acquired_at: 'x',
      }),
    );
    const alive = path.join(tmp, 'autoctx-bundles-alive1');
    fs.mkdirSync(alive);
    fs.writeFileSync(
      path.join(alive, '.owner.json'),
      JSON.stringify({
        pid: process.pid,
        hostname: os.hostname(),
        boot_id: null,
        start_time: null,
        nonce: 'y',
        acquired_at: 'x',
      }),
    );
    // its own process: the live folder's owner is this test process, which an in-process run would be
    const r = confirm(t, c, `node ${path.join(PROJECT_ROOT, 'test/fixtures/evaluators/fake.js')}`, tmp, [], true);
    expect(r.json.status).toBe('confirmed');
    expect(fs.readdirSync(tmp)).toEqual(['autoctx-bundles-alive1']);
  });
});

describe('each arm gets a fresh copy of its bundle', () => {
  it(
    'an arm that writes into bundle_dir fails the run naming the file; ' +
      'nothing is recorded for that pair, and no later arm sees it',
    () => {
      const {t, c, tmp, script} = setup();
      const writer = script(
        'writer.mjs',
        `fs.writeFileSync(req.bundle_dir + '/playbook/notes.md', 'seen by the ` +
          `next arm?');\nprocess.stdout.write(JSON.stringify({score: 0.5}));`,
      );
      const r = confirm(t, c, `node ${writer}`, tmp);
      expect([r.status, r.json.error.code]).toEqual([8, 'EVALUATOR_FAILED']);
      expect(r.json.error.message).toContain('playbook/notes.md');
      expect(fs.existsSync(t.file(`candidates/${c}/matched_trials.json`))).toBe(false);
      // An evaluator that only reads is fine, and sees exactly the bundle (another candidate: a changed script is
      // another
      // evaluator).
      const d = t.propose('d', {...B, 'hints/hints.md': 'd\n'});
      const reader = script(
        'reader.mjs',
        `const ok = fs.readFileSync(req.bundle_dir + '/manifest.json', ` +
          `'utf8').includes(req.bundle_digest) && !fs.existsSync(req.bundle_dir ` +
          `+ '/playbook/notes.md');\nprocess.stdout.write(JSON.stringify({score: ` +
          `ok ? (req.arm === 'candidate' ? 0.9 : 0.1) : 0}));`,
      );
      expect(confirm(t, d, `node ${reader}`, tmp).json).toMatchObject({status: 'confirmed'});
    },
  );
});

describe('a plan too large to run', () => {
  it('--seeds-per-fixture 1e5 over 12 fixtures is refused at once, before anything is locked or written', () => {
    const {t, c, tmp} = setup();
    const before = treeHash(t.knowledge);
    const r = confirm(t, c, `node ${path.join(PROJECT_ROOT, 'test/fixtures/evaluators/fake.js')}`, tmp, [
      '--seeds-per-fixture',
      '100000',
    ]);
    expect([r.status, r.json.error.code]).toEqual([2, 'PLAN_TOO_LARGE']);
    expect(r.ms).toBeLessThan(5000);
    expect(treeHash(t.knowledge)).toBe(before);
  });
});

describe('evaluator identity covers the files its command names', () => {
  it(
    'a script edited between two runs of the same command is refused ' +
      "naming the file; the digests are recorded in the plan's additions",
    () => {
      const {t, c, tmp, script} = setup();
      const ev = script(
        'ev.mjs',
        `process.stdout.write(JSON.stringify({score: req.arm === 'candidate' ? 0.8 : 0.2}));`,
      );
      const first = confirm(t, c, `node ${ev}`, tmp, ['--evaluator-version', 'v1']);
      expect(first.json.status).toBe('confirmed');
      const plan = JSON.parse(t.read(`candidates/${c}/evaluator_plan.json`));
      expect(plan.additions.evaluator_files).toEqual([
        {path: path.relative(PROJECT_ROOT, ev), sha256: expect.stringMatching(/^[0-9a-f]{64}$/)},
      ]);
      fs.appendFileSync(ev, '// edited\n');
      const again = confirm(t, c, `node ${ev}`, tmp, ['--evaluator-version', 'v1']);
      expect([again.status, again.json.error.code]).toEqual([8, 'EVALUATOR_CHANGED']);
      expect(again.json.error.message).toContain(`${path.relative(PROJECT_ROOT, ev)} changed since the plan was bound`);
    },
  );
});
