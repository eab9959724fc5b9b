import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type {CliResult} from './cli.js';
import {PROJECT_ROOT} from './paths.js';
import {tempDir} from './tree.js';

/** A CLI process started without waiting for it. */
export interface Started {
  done: Promise<CliResult>;
  pid: number;
}

/** Start the CLI on a knowledge tree (in JSON) without waiting for it. */
export function start(knowledge: string, args: string[], env: NodeJS.ProcessEnv = {}): Started {
  const child = spawn(
    process.execPath,
    [path.join(PROJECT_ROOT, 'bin/run.js'), ...args, '--knowledge', knowledge, '--json'],
    {cwd: PROJECT_ROOT, env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'pipe', 'pipe']},
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (status) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({status, stdout, stderr, json});
    }),
  );
  return {done, pid: child.pid!};
}

/**
 * Start the CLI stopped at a named pause point (AUTOCTX_PAUSE: the process stops itself there
 * until SIGCONT); resolves once it has stopped there. Its trace folder is a temporary folder.
 */
export async function paused(
  knowledge: string,
  args: string[],
  point: string,
  env: NodeJS.ProcessEnv = {},
): Promise<Started & {resume: () => void}> {
  const trace = path.join(tempDir('autoctx-pause-'), 'trace');
  const s = start(knowledge, args, {...env, AUTOCTX_PAUSE: point, AUTOCTX_PAUSE_TRACE: trace});
  const stopped = () =>
    fs.existsSync(trace) && /^\S+ \S+ T /.test(fs.readFileSync(`/proc/${s.pid}/stat`, 'utf8').replace(/\(.*\)/s, 'x'));
  for (let i = 0; !stopped(); i++) {
    if (i > 600) throw new Error(`the process never reached ${point}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {...s, resume: () => process.kill(s.pid, 'SIGCONT')};
}
