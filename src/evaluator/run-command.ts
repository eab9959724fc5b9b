import {spawn, type ChildProcess} from 'node:child_process';
import {AutoctxError, environmentError} from '../errors.js';

/**
 * An evaluator that could not be started because the environment refused
 * (too many open files, say): the environment's code (exit 9), naming the
 * command, and saying that what was recorded before stays recorded.
 */
export function spawnFailure(error: unknown, command: string): AutoctxError {
  const env = environmentError(error);
  const e = error as NodeJS.ErrnoException;
  if (!env) return new AutoctxError('EVALUATOR_FAILED', `could not start the evaluator ${JSON.stringify(command)}: ${e?.message ?? String(error)}`);
  return new AutoctxError(env.code, `could not start the evaluator (sh -c ${JSON.stringify(command)}): ${e.code}; pairs recorded before stay recorded, and the next run goes on from them`, {...env.data, file: 'sh'});
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const MAX_OUTPUT = 16 * 1024 * 1024;

/** Kill a child and everything it started (it leads its own process group). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Run `sh -c command`, give it `input` on stdin, collect its output, kill it after `timeoutMs`. */
export function runCommand(command: string, input: string, timeoutMs: number, env?: NodeJS.ProcessEnv): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn('sh', ['-c', command], {stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: env ?? process.env});
    } catch (error) {
      return reject(spawnFailure(error, command));
    }
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let failed: AutoctxError | null = null;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, timeoutMs);
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += d;
    });
    child.stderr?.on('data', (d: string) => {
      if (stderr.length < 65536) stderr += d;
    });
    child.stdin?.on('error', () => undefined);
    child.on('error', (error) => {
      // The process could not be started (spawn failed): no 'close' may follow.
      failed = spawnFailure(error, command);
      clearTimeout(timer);
      reject(failed);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failed) return;
      resolve({code, signal, stdout, stderr, timedOut});
    });
    child.stdin?.end(input);
  });
}
