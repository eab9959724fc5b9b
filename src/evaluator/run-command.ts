import {spawn, type ChildProcess} from 'node:child_process';
import {AutoctxError, environmentError, isSystemError, rethrowUnless} from '../errors.js';
import {keepStderr} from './stderr-tail.js';

/**
 * An evaluator that could not be started because the environment refused
 * (too many open files, say): the environment's code (exit 9), naming the
 * command, and saying that what was recorded before stays recorded.
 */
export function spawnFailure(error: unknown, command: string): AutoctxError {
  const env = environmentError(error);
  const e = error as NodeJS.ErrnoException;
  if (!env)
    return new AutoctxError(
      'EVALUATOR_FAILED',
      `could not start the evaluator ${JSON.stringify(command)}: ${e?.message ?? String(error)}`,
    );
  return new AutoctxError(
    env.code,
    `could not start the evaluator (sh -c ${JSON.stringify(command)}): ${e.code}; pairs recorded before ` +
      `stay recorded, and the next run goes on from them`,
    {...env.data, file: 'sh'},
  );
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const MAX_OUTPUT = 16 * 1024 * 1024;

/**
 * Evaluator processes alive now, and what must be removed if autoctx is
 * interrupted: on Ctrl-C (SIGINT), SIGTERM or exit, every evaluator's process
 * group is ended and each cleanup runs, so nothing is left running or lying
 * around. A descendant that left its group (setsid) is beyond reach; autoctx
 * never waits for it (see the one-second rule below).
 */
const live = new Set<ChildProcess>();
const cleanups = new Set<() => void>();
let installed = false;

function endAll(): void {
  for (const c of live) killGroup(c);
  live.clear();
  for (const f of cleanups) {
    // biome-ignore lint/plugin: at exit every cleanup gets its turn: one that fails must not stop the others
    try {
      f();
    } catch {
      // best effort: the next run or repair removes what is left
    }
  }
  cleanups.clear();
}

/** The signal that interrupted an evaluation run, and what waits for it. */
let interrupted: 'SIGINT' | 'SIGTERM' | null = null;
const waiting = new Set<(e: AutoctxError) => void>();
let unwinding = 0;

/** How long an interrupted run may take to put its things away before autoctx exits anyway. */
const UNWIND_MS = 10_000;

/** The error an interrupted run unwinds with (null: not interrupted). */
export function interruption(): AutoctxError | null {
  if (interrupted === null) return null;
  return interrupted === 'SIGINT'
    ? new AutoctxError('INTERRUPTED', 'interrupted')
    : new AutoctxError('TERMINATED', 'terminated');
}

/** An interruption's error (INTERRUPTED or TERMINATED): a run stops for it, it is no integrity alert. */
export function isInterruption(error: unknown): boolean {
  const code = (error as {code?: unknown})?.code;
  return error instanceof AutoctxError && (code === 'INTERRUPTED' || code === 'TERMINATED');
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      const code = sig === 'SIGINT' ? 130 : 143;
      // Nothing to unwind, or a second signal: end everything and go.
      if (unwinding === 0 || interrupted !== null) {
        endAll();
        process.exit(code);
      }
      // The first one during a run: its evaluators end now, what waits for them gets the interruption, and the run
      // puts its things away (what it recorded, its locks, its folders) and exits with the code itself.
      interrupted = sig;
      for (const c of live) killGroup(c);
      const error = interruption()!;
      for (const w of [...waiting]) w(error);
      setTimeout(() => {
        endAll();
        process.exit(code);
      }, UNWIND_MS).unref();
    });
  }
  process.on('exit', endAll);
}

/**
 * While a run holds this (until the returned function is called), a first
 * Ctrl-C or SIGTERM does not exit at once: the evaluators are ended, work
 * passed through `interruptible` rejects with the interruption, and the run
 * unwinds. A second signal exits at once.
 */
export function unwindOnInterrupt(): () => void {
  install();
  unwinding++;
  let done = false;
  return () => {
    if (!done) unwinding--;
    done = true;
  };
}

/** `work`, or the interruption if it comes first. */
export function interruptible<T>(work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const now = interruption();
    if (now) {
      work.catch(() => undefined);
      return reject(now);
    }
    waiting.add(reject);
    work.then(
      (value) => {
        waiting.delete(reject);
        resolve(value);
      },
      (error: unknown) => {
        waiting.delete(reject);
        reject(error);
      },
    );
  });
}

/** Track an evaluator process: its group is ended if autoctx is interrupted or exits. */
export function track(child: ChildProcess): void {
  install();
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/** Run `cleanup` if autoctx is interrupted before the returned function is called. */
export function onInterrupt(cleanup: () => void): () => void {
  install();
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/** How long autoctx keeps reading an evaluator's pipes after the evaluator ended or was ended. */
export const PIPE_GRACE_MS = 1000;

/** Kill a child and everything it started (it leads its own process group). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch (error) {
    rethrowUnless(error, isSystemError);
    try {
      child.kill('SIGKILL');
    } catch (error) {
      rethrowUnless(error, isSystemError);
      // already gone
    }
  }
}

/** Run `sh -c command`, give it `input` on stdin, collect its output, kill it after `timeoutMs`. */
export function runCommand(
  command: string,
  input: string,
  timeoutMs: number,
  env?: NodeJS.ProcessEnv,
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn('sh', ['-c', command], {stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: env ?? process.env});
    } catch (error) {
      rethrowUnless(error, isSystemError);
      return reject(spawnFailure(error, command));
    }
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let failed: AutoctxError | null = null;
    let settled = false;
    track(child);
    // Pipes held by a descendant that escaped the group would keep 'close' from ever coming: stop reading them.
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({code: child.exitCode, signal: child.signalCode, stdout, stderr, timedOut});
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
      setTimeout(finish, PIPE_GRACE_MS).unref();
    }, timeoutMs);
    child.once('exit', () => setTimeout(finish, PIPE_GRACE_MS).unref());
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += d;
    });
    child.stderr?.on('data', (d: string) => {
      stderr = keepStderr(stderr, d);
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
      if (failed || settled) return;
      settled = true;
      resolve({code, signal, stdout, stderr, timedOut});
    });
    child.stdin?.end(input);
  });
}
