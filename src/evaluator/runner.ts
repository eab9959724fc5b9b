import {spawn, type ChildProcessWithoutNullStreams} from 'node:child_process';
import {createInterface} from 'node:readline';
import {AutoctxError, fail} from '../errors.js';
import {parseAnswer, type EvaluationAnswer, type EvaluationRequest} from './protocol.js';
import {keepStderr, stderrHeadline, stderrTail} from './stderr-tail.js';
import {interruptible, killGroup, PIPE_GRACE_MS, runCommand, spawnFailure, track} from './run-command.js';

export interface EvaluatorOptions {
  command: string;
  mode: 'per-arm' | 'persistent';
  timeoutSeconds: number;
  concurrency: number;
  /** Variables every evaluator process gets beside autoctx's own environment (AUTOCTX_ARTIFACT_DIR, ...). */
  env?: Readonly<Record<string, string>> | undefined;
}

function processEnv(o: EvaluatorOptions): NodeJS.ProcessEnv {
  return o.env ? {...process.env, ...o.env} : process.env;
}

/** Something that answers evaluation requests. */
export interface Evaluator {
  evaluate(request: EvaluationRequest): Promise<EvaluationAnswer>;
  close(): Promise<void>;
}

function describeExit(r: {code: number | null; signal: NodeJS.Signals | null; stderr: string}): string {
  const headline = stderrHeadline(stderrTail(r.stderr));
  return `${r.signal ? `was killed by ${r.signal}` : `exited ${r.code}`}${headline ? `: ${headline}` : ''}`;
}

/** The error data of a failed evaluator: the last lines of its stderr, which the CLI shows under the error line. */
function stderrData(stderr: string): {stderr_tail: string[]} | undefined {
  const tail = stderrTail(stderr);
  return tail.length > 0 ? {stderr_tail: tail} : undefined;
}

/** Start the command once per arm: one request line on stdin, one answer on stdout. */
class PerArmEvaluator implements Evaluator {
  constructor(private readonly o: EvaluatorOptions) {}

  async evaluate(request: EvaluationRequest): Promise<EvaluationAnswer> {
    const r = await runCommand(
      this.o.command,
      `${JSON.stringify(request)}\n`,
      this.o.timeoutSeconds * 1000,
      processEnv(this.o),
    );
    if (r.timedOut)
      fail(
        'EVALUATOR_FAILED',
        `evaluator timed out after ${this.o.timeoutSeconds}s on ${request.arm} ${request.fixture} (seed ` +
          `${request.seed})`,
      );
    if (r.code !== 0)
      fail(
        'EVALUATOR_FAILED',
        `evaluator ${describeExit(r)} on ${request.arm} ${request.fixture} (seed ${request.seed})`,
        stderrData(r.stderr),
      );
    return parseAnswer(r.stdout.trim(), request, {requireRequestId: false});
  }

  async close(): Promise<void> {}
}

interface Pending {
  request: EvaluationRequest;
  resolve: (a: EvaluationAnswer) => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout;
}

/** A long-running evaluator speaking JSON Lines; answers echo request_id. */
class PersistentWorker {
  private readonly child: ChildProcessWithoutNullStreams;
  private pending: Pending | null = null;
  private dead: AutoctxError | null = null;
  private stderr = '';

  /** Settles once the process started ('spawn') or could not be started ('error'): requests wait for it. */
  private readonly started: Promise<void>;

  constructor(private readonly o: EvaluatorOptions) {
    this.child = spawn('sh', ['-c', o.command], {stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: processEnv(o)});
    track(this.child);
    this.started = new Promise<void>((resolve) => {
      this.child.once('spawn', () => resolve());
      this.child.on('error', (error) => {
        // It could not be started (no descriptors left, say): its pipes may not even exist.
        this.dead ??= spawnFailure(error, o.command);
        this.settle((p) => p.reject(this.dead));
        resolve();
      });
    });
    // A failed spawn leaves no pipes to listen to.
    this.child.stdin?.on('error', () => undefined);
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (d: string) => {
      this.stderr = keepStderr(this.stderr, d);
    });
    if (this.child.stdout) createInterface({input: this.child.stdout}).on('line', (line) => this.onLine(line));
    this.child.on('close', (code, signal) => {
      if (this.dead) return this.settle((p) => p.reject(this.dead));
      this.dead = new AutoctxError(
        'EVALUATOR_FAILED',
        `persistent evaluator ${describeExit({code, signal, stderr: this.stderr})}`,
        stderrData(this.stderr),
      );
      this.settle((p) => p.reject(this.dead));
    });
  }

  private settle(fn: (p: Pending) => void): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    fn(p);
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    const p = this.pending;
    if (!p) {
      this.dead = new AutoctxError(
        'EVALUATOR_FAILED',
        `persistent evaluator wrote output nobody asked for: ${JSON.stringify(line.slice(0, 120))}`,
      );
      return;
    }
    // biome-ignore lint/plugin: passed on, not swallowed: the pending request rejects with it
    try {
      const answer = parseAnswer(line, p.request, {requireRequestId: true});
      this.settle((x) => x.resolve(answer));
    } catch (error) {
      this.settle((x) => x.reject(error));
    }
  }

  async evaluate(request: EvaluationRequest): Promise<EvaluationAnswer> {
    await this.started;
    if (this.dead) throw this.dead;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.dead = new AutoctxError(
          'EVALUATOR_FAILED',
          `evaluator timed out after ${this.o.timeoutSeconds}s on ${request.arm} ${request.fixture} (seed ` +
            `${request.seed})`,
        );
        this.settle((p) => p.reject(this.dead));
        killGroup(this.child);
      }, this.o.timeoutSeconds * 1000);
      this.pending = {request, resolve, reject, timer};
      this.child.stdin?.write(`${JSON.stringify(request)}\n`);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      // never started, or gone
      if (this.child.pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null)
        return resolve();
      this.child.once('close', () => resolve());
      this.child.stdin?.end();
      // Ended if it does not stop on its own, and not waited for beyond a second more (an escaped descendant may hold
      // its pipes).
      setTimeout(() => {
        killGroup(this.child);
        setTimeout(() => {
          this.child.stdout?.destroy();
          this.child.stderr?.destroy();
          resolve();
        }, PIPE_GRACE_MS).unref();
      }, 2000).unref();
    });
  }
}

/** N persistent workers; a request waits for a free one. */
class PersistentPool implements Evaluator {
  private readonly idle: PersistentWorker[] = [];
  private readonly all: PersistentWorker[] = [];
  private readonly waiting: Array<(w: PersistentWorker) => void> = [];

  constructor(private readonly o: EvaluatorOptions) {}

  private acquire(): Promise<PersistentWorker> {
    const w = this.idle.pop();
    if (w) return Promise.resolve(w);
    if (this.all.length < this.o.concurrency) {
      const fresh = new PersistentWorker(this.o);
      this.all.push(fresh);
      return Promise.resolve(fresh);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(w: PersistentWorker): void {
    const next = this.waiting.shift();
    if (next) next(w);
    else this.idle.push(w);
  }

  async evaluate(request: EvaluationRequest): Promise<EvaluationAnswer> {
    const w = await this.acquire();
    try {
      return await w.evaluate(request);
    } finally {
      this.release(w);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((w) => w.close()));
  }
}

export function createEvaluator(o: EvaluatorOptions): Evaluator {
  if (!Number.isFinite(o.timeoutSeconds) || o.timeoutSeconds <= 0)
    fail('USAGE', '--timeout must be a positive number of seconds');
  if (!Number.isSafeInteger(o.concurrency) || o.concurrency < 1)
    fail('USAGE', '--concurrency must be a positive integer');
  const inner = o.mode === 'persistent' ? new PersistentPool(o) : new PerArmEvaluator(o);
  // An answer still awaited when autoctx is interrupted is not awaited any longer (its process is ended).
  return {evaluate: (request) => interruptible(inner.evaluate(request)), close: () => inner.close()};
}
