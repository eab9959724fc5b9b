import {spawn, type ChildProcess} from 'node:child_process';

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
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], {stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: env ?? process.env});
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, timeoutMs);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += d;
    });
    child.stderr.on('data', (d: string) => {
      if (stderr.length < 65536) stderr += d;
    });
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => {
      stderr += String(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({code, signal, stdout, stderr, timedOut});
    });
    child.stdin.end(input);
  });
}
