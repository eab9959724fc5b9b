import {spawn, type ChildProcess} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {FIXTURES_12, POLICY_SMALL, useTrees, type Tree} from '../helpers/pipeline.js';

// Ctrl-C during confirm, through a pipe and on a terminal: one line saying what was kept and how to go on, exit 130,
// the live view put away (the cursor shown again), the locks released (verify has nothing to say), and the same
// command resumes from the pairs kept.
const tree = useTrees();
const B = {'playbook/playbook.md': 'Be helpful and precise.\n'};

/** A per-arm evaluator that answers the first SLOW_AFTER requests at once and then never (counted in SLOW_COUNTER). */
function slowEvaluator(t: Tree): string {
  const f = path.join(t.dir, 'slow.mjs');
  fs.writeFileSync(
    f,
    "import fs from 'node:fs';\n" +
      "const req = JSON.parse(fs.readFileSync(0, 'utf8'));\n" +
      'const f = process.env.SLOW_COUNTER;\n' +
      "const n = (fs.existsSync(f) ? Number(fs.readFileSync(f, 'utf8')) : 0) + 1;\n" +
      'fs.writeFileSync(f, String(n));\n' +
      'if (process.env.SLOW_AFTER && n > Number(process.env.SLOW_AFTER)) setTimeout(() => {}, 600000);\n' +
      "else process.stdout.write(JSON.stringify({score: req.arm === 'candidate' ? 0.7 + (n % 3) * 0.01 : 0.5}));\n",
  );
  return f;
}

function confirmLine(t: Tree, c: string, evaluator: string): string[] {
  return [
    path.join(PROJECT_ROOT, 'bin/run.js'),
    'confirm',
    c,
    '--evaluator',
    `node ${evaluator}`,
    '--fixtures',
    FIXTURES_12,
    '--policy',
    POLICY_SMALL,
    '--knowledge',
    t.knowledge,
  ];
}

/** Wait until the evaluator has been asked `n` times (three pairs answered, the fourth pair's first arm waiting). */
async function askedAtLeast(counter: string, n: number): Promise<void> {
  for (let i = 0; !(fs.existsSync(counter) && Number(fs.readFileSync(counter, 'utf8')) >= n); i++) {
    if (i > 600) throw new Error('the evaluator was never asked');
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 200));
}

function finished(child: ChildProcess): Promise<{code: number | null; out: string; err: string}> {
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({code, out, err})));
}

/** verify finds nothing (no LEFTOVER_LOCK), and the same command without the slow evaluator goes on from 3 pairs. */
function resumes(t: Tree, c: string, evaluator: string, counter: string): void {
  expect(t.cli(['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
  fs.writeFileSync(counter, '0');
  const r = t.cli(['confirm', c, ...confirmLine(t, c, evaluator).slice(3, -2)], {SLOW_COUNTER: counter});
  expect(r.json.status).toBe('confirmed');
  expect(r.json.pairs_recorded - r.json.pairs_evaluated).toBe(3);
  expect(Number(fs.readFileSync(counter, 'utf8'))).toBe(2 * r.json.pairs_evaluated);
}

describe('Ctrl-C during confirm', () => {
  it('through a pipe (--json): the envelope says what was kept, exit 130, locks released, resumable', async () => {
    const t = tree();
    const c = t.propose('c', B);
    const evaluator = slowEvaluator(t);
    const counter = path.join(t.dir, 'counter');
    const child = spawn(process.execPath, [...confirmLine(t, c, evaluator), '--json'], {
      env: {...process.env, NO_COLOR: '1', SLOW_COUNTER: counter, SLOW_AFTER: '6'},
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const done = finished(child);
    await askedAtLeast(counter, 7);
    child.kill('SIGINT');
    const {code, out} = await done;
    expect(code).toBe(130);
    expect(out.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(out)).toEqual({
      status: 'error',
      error: {
        code: 'INTERRUPTED',
        exit_code: 130,
        message: 'interrupted; 3 pairs kept; run the same command to resume',
        data: {pairs_recorded: 3},
      },
    });
    resumes(t, c, evaluator, counter);
  }, 60_000);

  it('on a terminal: the live view is put away, the cursor shown, then one line; exit 130; resumable', async () => {
    const t = tree();
    const c = t.propose('c', B);
    const evaluator = slowEvaluator(t);
    const counter = path.join(t.dir, 'counter');
    const line = [process.execPath, ...confirmLine(t, c, evaluator)].map((w) => `'${w}'`).join(' ');
    // script(1) gives the command a terminal; ^C written to it is the terminal's Ctrl-C (SIGINT to its foreground).
    const child = spawn('script', ['-qfec', line, '/dev/null'], {
      env: {...process.env, CI: '', NO_COLOR: '1', TERM: 'xterm', SLOW_COUNTER: counter, SLOW_AFTER: '6'},
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const done = finished(child);
    await askedAtLeast(counter, 7);
    child.stdin!.write('\x03');
    const {code, out} = await done;
    expect(code).toBe(130);
    expect(out).toContain('╭'); // the live view was drawn
    const lines = out.split(/\r?\n/).filter((l) => l.trim() !== '');
    expect(lines[lines.length - 1]).toMatch(
      /^(\u001b\[\?25h)?error INTERRUPTED: interrupted; 3 pairs kept; run the same command to resume$/,
    );
    // The cursor the view hid is shown again before the line.
    expect(out.lastIndexOf('\u001b[?25h')).toBeGreaterThan(out.lastIndexOf('\u001b[?25l'));
    resumes(t, c, evaluator, counter);
  }, 60_000);
});
