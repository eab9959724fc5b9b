import {spawnSync} from 'node:child_process';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';

// An evaluator that cannot be started because the process has no file descriptors
// left is TOO_MANY_OPEN_FILES (exit 9), never a raw stack trace. The limit is set for a child
// process (ulimit -n), which then uses up its descriptors and asks autoctx's runner to start evaluators.
function underLimit(body: string): {code: string; message: string}[] {
  const script = `
    const fs = await import('node:fs');
    const {runCommand} = await import(${JSON.stringify(path.join(PROJECT_ROOT, 'dist/evaluator/run-command.js'))});
    const {createEvaluator} = await import(${JSON.stringify(path.join(PROJECT_ROOT, 'dist/evaluator/runner.js'))});
    const held = [];
    try { for (;;) held.push(fs.openSync('/dev/null', 'r')); } catch {}
    for (let i = 0; i < 2; i++) fs.closeSync(held.pop()); // room for one pipe, not for three
    const out = [];
    ${body}
    process.stdout.write(JSON.stringify(out));
  `;
  const r = spawnSync('bash', ['-c', `ulimit -n 64; exec "${process.execPath}" --input-type=module -e "$0"`, script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

describe('too many open files', () => {
  it('a per-arm evaluator that cannot be started is TOO_MANY_OPEN_FILES (exit 9), naming the command', () => {
    const out = underLimit(
      `
      try { await runCommand('true', '', 5000); out.push({code: 'none', message: ''}); ` +
        `} catch (e) { out.push({code: e.code, message: e.message, exit: e.exitCode}); }
    `,
    );
    expect(out).toEqual([
      expect.objectContaining({
        code: 'TOO_MANY_OPEN_FILES',
        exit: 9,
        message: expect.stringContaining('could not start the evaluator'),
      }),
    ]);
  });

  it('a persistent evaluator that cannot be started fails its request the same way, and closes', () => {
    const out = underLimit(
      `
      const ev = createEvaluator({command: 'cat', mode: 'persistent', ` +
        `timeoutSeconds: 5, concurrency: 1});
      try { await ev.evaluate({arm: 'candidate', fixture: 'f', seed: 1, ` +
        `request_id: 'r'}); out.push({code: 'none', message: ''}); } catch (e) { ` +
        `out.push({code: e.code, message: e.message, exit: e.exitCode}); }
      await ev.close();
    `,
    );
    expect(out).toEqual([expect.objectContaining({code: 'TOO_MANY_OPEN_FILES', exit: 9})]);
  });
});
