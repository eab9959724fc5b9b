import {spawn, type ChildProcess} from 'node:child_process';
import {fail, isSystemError, rethrowUnless} from '../../../errors.js';
import {killGroup, track} from '../../../evaluator/run-command.js';

/** Output kept from a stream: its first bytes, its last bytes, and how many it wrote in all. */
export class HeadTail {
  private head: Buffer[] = [];
  private headSize = 0;
  private tail: Buffer[] = [];
  private tailSize = 0;
  total = 0;

  constructor(
    private readonly headLimit: number,
    private readonly tailLimit: number,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headSize < this.headLimit) {
      const take = rest.subarray(0, this.headLimit - this.headSize);
      this.head.push(take);
      this.headSize += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailSize += rest.length;
    while (this.tailSize - this.tail[0]!.length >= this.tailLimit) this.tailSize -= this.tail.shift()!.length;
  }

  /** Whether every byte is kept. */
  get whole(): boolean {
    return this.total === this.headSize + this.tailSize;
  }

  /** The kept bytes as text: all of them, or the head and the tail around a line saying how many were left out. */
  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    if (this.whole) return head + tail;
    return `${head}\n[… ${this.total - this.headSize - this.tailSize} bytes left out by autoctx …]\n${tail}`;
  }

  /** The last bytes as text (what ends the output: a host's result line). */
  tailText(): string {
    return Buffer.concat(this.whole ? [...this.head, ...this.tail] : this.tail).toString('utf8');
  }
}

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: HeadTail;
  stderr: HeadTail;
  ms: number;
}

/**
 * The guardian: one small process per evaluator, outside its process group, that knows the process groups of the
 * programs it runs and its scratch folders (a line `+g PGID`, `-g PGID`, `+d FOLDER` or `-d FOLDER` each on its
 * stdin), and once its stdin ends, which is when the evaluator is gone, kills those groups and removes those folders.
 * An evaluator killed outright (autoctx ends it with SIGKILL on its timeout or an interrupt) can clean up nothing
 * itself, and an agent left running would go on working, and spending, for nobody.
 */
const GUARDIAN = [
  'const groups = new Set();',
  'const folders = new Set();',
  "require('node:readline').createInterface({input: process.stdin}).on('line', (l) => {",
  "  const set = l[1] === 'g' ? groups : folders;",
  "  if (l[0] === '+') set.add(l.slice(3));",
  '  else set.delete(l.slice(3));',
  "}).on('close', () => {",
  '  for (const g of groups) try { process.kill(-Number(g), "SIGKILL"); } catch {}',
  "  for (const f of folders) try { require('node:fs').rmSync(f, {recursive: true, force: true}); } catch {}",
  '  process.exit(0);',
  '});',
].join('\n');

let guardian: ChildProcess | null = null;

function guard(line: string): void {
  if (guardian === null) {
    guardian = spawn(process.execPath, ['-e', GUARDIAN], {detached: true, stdio: ['pipe', 'ignore', 'ignore']});
    guardian.on('error', () => undefined);
    guardian.stdin?.on('error', () => undefined);
    guardian.unref();
    (guardian.stdin as unknown as {unref?: () => void} | null)?.unref?.();
  }
  guardian.stdin?.write(`${line}\n`);
}

/** Have the guardian remove a scratch folder if the evaluator is killed before it does (`keep` false: it did). */
export function guardFolder(dir: string, keep: boolean): void {
  guard(`${keep ? '+' : '-'}d ${dir}`);
}

/**
 * Run a program (no shell) in its own process group with a wall-clock budget: past it the whole group is killed.
 * Output is kept bounded (head and tail). A program that cannot be started is `notFound` (the caller says what that
 * means), never a crash.
 */
export function runBounded(
  file: string,
  args: readonly string[],
  options: {cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; stdin?: string; keep?: number},
): Promise<ProcessResult & {spawnError?: string}> {
  const keep = options.keep ?? 1024 * 1024;
  return new Promise((resolve) => {
    const started = Date.now();
    const stdout = new HeadTail(keep, 4 * keep);
    const stderr = new HeadTail(16 * 1024, 48 * 1024);
    let child: ChildProcess;
    try {
      child = spawn(file, args, {cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe']});
    } catch (error) {
      rethrowUnless(error, isSystemError);
      return resolve({
        code: null,
        signal: null,
        timedOut: false,
        stdout,
        stderr,
        ms: 0,
        spawnError: (error as NodeJS.ErrnoException).code ?? String(error),
      });
    }
    track(child);
    const group = child.pid;
    if (group !== undefined) guard(`+g ${group}`);
    let timedOut = false;
    let settled = false;
    const finish = (extra: {spawnError?: string} = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({
        code: child.exitCode,
        signal: child.signalCode,
        timedOut,
        stdout,
        stderr,
        ms: Date.now() - started,
        ...extra,
      });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, options.timeoutMs);
    child.stdout?.on('data', (d: Buffer) => stdout.push(d));
    child.stderr?.on('data', (d: Buffer) => stderr.push(d));
    child.stdin?.on('error', () => undefined);
    child.on('error', (error: NodeJS.ErrnoException) => finish({spawnError: error.code ?? error.message}));
    // The group goes with the program: nothing it started is left running, and pipes a descendant holds end.
    child.on('exit', () => {
      killGroup(child);
      if (group !== undefined) guard(`-g ${group}`);
      setTimeout(finish, 200).unref();
    });
    child.on('close', () => finish());
    child.stdin?.end(options.stdin ?? '');
  });
}

/** A program that could not be started at all: the fixture's or the flag's fault, said in one line. */
export function notStarted(what: string, file: string, why: string): never {
  fail('EVALUATOR_FAILED', `could not start ${what} ${JSON.stringify(file)}: ${why}`);
}
