import {spawnSync} from 'node:child_process';
import path from 'node:path';
import {MessageChannel, receiveMessageOnPort, Worker} from 'node:worker_threads';
import {PROJECT_ROOT} from './paths.js';
import {tempDir} from './tree.js';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

export interface CliOptions {
  cwd?: string;
  input?: string;
  env?: NodeJS.ProcessEnv;
}

function withJson(args: string[], r: {status: number | null; stdout: string; stderr: string}): CliResult {
  let json: unknown;
  if (args.includes('--json')) {
    try {
      json = JSON.parse(r.stdout);
    } catch {
      json = undefined;
    }
  }
  return {status: r.status, stdout: r.stdout, stderr: r.stderr, json};
}

/** Run the built CLI (bin/run.js on dist/) as its own process, as a user would. */
export function runCliProcess(args: string[], options: CliOptions = {}): CliResult {
  const r = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'run.js'), ...args], {
    cwd: options.cwd ?? PROJECT_ROOT,
    input: options.input ?? '',
    encoding: 'utf8',
    env: cliEnv(options.env),
  });
  return withJson(args, r);
}

let worker: Worker | undefined;

/**
 * Run the built CLI's commands (dist/, through oclif) in a worker thread of
 * this test process: the same commands, flags, output and exit codes as a
 * process, without a process start per command. Spawned instead when the run
 * needs a process of its own: input on stdin, another working folder, or
 * crash injection (which kills the process it runs in).
 */
export function runCli(args: string[], options: CliOptions = {}): CliResult {
  const env = cliEnv(options.env);
  if (
    (options.input !== undefined && options.input !== '') ||
    options.cwd !== undefined ||
    env.AUTOCTX_FAULT ||
    env.AUTOCTX_FAULT_TRACE ||
    env.AUTOCTX_PAUSE ||
    process.env.AUTOCTX_TEST_SPAWN === '1'
  )
    return runCliProcess(args, options);
  if (!worker) {
    worker = new Worker(new URL('./cli-worker.js', import.meta.url), {
      workerData: {manifest: path.join(PROJECT_ROOT, 'package.json')},
      stdout: false,
      stderr: false,
    });
    worker.unref();
  }
  const {port1, port2} = new MessageChannel();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  worker.postMessage({args, env: {...env, CI: '1'}, port: port2, flag}, [port2]);
  if (Atomics.wait(flag, 0, 0, 300_000) === 'timed-out')
    throw new Error(`autoctx ${args.join(' ')}: no answer from the in-process CLI within 300 s`);
  const answer = receiveMessageOnPort(port1)?.message as {status: number; stdout: string; stderr: string} | undefined;
  port1.close();
  if (!answer) throw new Error(`autoctx ${args.join(' ')}: the in-process CLI gave no answer`);
  return withJson(args, answer);
}

let childTmp: string | undefined;

function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // A killed child cannot remove its own temporary folders: give it one that the test file removes.
  childTmp ??= tempDir('autoctx-cli-tmp-');
  const env: NodeJS.ProcessEnv = {...process.env, NO_COLOR: '1', TMPDIR: childTmp, ...extra};
  delete env.AUTOCTX_KNOWLEDGE;
  delete env.NODE_OPTIONS;
  if (extra.AUTOCTX_KNOWLEDGE !== undefined) env.AUTOCTX_KNOWLEDGE = extra.AUTOCTX_KNOWLEDGE;
  return env;
}
