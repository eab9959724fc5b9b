import {spawnSync} from 'node:child_process';
import path from 'node:path';
import {PROJECT_ROOT} from './paths.js';
import {tempDir} from './tree.js';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** Run the built CLI (bin/run.js on dist/) as a user would. */
export function runCli(args: string[], options: {cwd?: string; input?: string; env?: NodeJS.ProcessEnv} = {}): CliResult {
  const r = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'run.js'), ...args], {
    cwd: options.cwd ?? PROJECT_ROOT,
    input: options.input ?? '',
    encoding: 'utf8',
    env: cliEnv(options.env),
  });
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
