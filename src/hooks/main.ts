import {runHook, DEFAULT_BUDGET_MS, INSTALLED_TIMEOUT_S} from './run.js';
import {STDIN_LIMIT} from './host-io.js';

/** Outcomes that are not failures: nothing is written on stderr for them. */
const QUIET = new Set([
  'injected',
  'recalled',
  'disabled',
  'not_configured',
  'empty',
  'already_delivered',
  'insufficient',
]);

/**
 * Read stdin whole (a TTY is no input), up to the limit and the deadline. Then stdin is let go: a host that
 * never closes it must not keep the hook alive past its answer (a paused pipe still holds the process).
 */
function readStdin(deadline: number): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      process.stdin.removeAllListeners();
      process.stdin.on('error', () => {});
      process.stdin.pause();
      process.stdin.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
    process.stdin.on('data', (d: Buffer) => {
      size += d.length;
      if (size <= STDIN_LIMIT + 1) chunks.push(d);
      else done();
    });
    process.stdin.on('end', done);
    process.stdin.on('error', done);
  });
}

/**
 * The hook entry point (bin/autoctx-hook.js, and `autoctx hook …`): one run,
 * at most one line on stdout, one content-free diagnostic line on stderr on
 * failure, exit 0 always. A hard stop past the budget (and under the
 * installed timeout) prints nothing more.
 */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const started = Date.now();
  const stop = setTimeout(
    () => {
      process.stderr.write(
        `${JSON.stringify({component: 'autoctx.hook', outcome: 'timeout', elapsed_ms: Date.now() - started})}\n`,
      );
      process.exit(0);
    },
    INSTALLED_TIMEOUT_S * 1000 - 400,
  );
  stop.unref();
  process.exitCode = 0;
  const stdin = await readStdin(started + DEFAULT_BUDGET_MS);
  const result = await runHook(argv, {stdin, env, write: (line) => process.stdout.write(line)});
  if (!QUIET.has(result.outcome))
    process.stderr.write(
      `${JSON.stringify({component: 'autoctx.hook', ...result, elapsed_ms: Date.now() - started})}\n`,
    );
  clearTimeout(stop);
  process.exitCode = 0;
  // Whatever still holds the process (a handle a library left open) ends at the hard stop, quietly: the answer is out.
  setTimeout(() => process.exit(0), Math.max(0, started + INSTALLED_TIMEOUT_S * 1000 - 400 - Date.now())).unref();
}
