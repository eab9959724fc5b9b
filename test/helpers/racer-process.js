// A CLI process of its own that runs commands one after another, for test/helpers/racer.ts: the built CLI
// (dist/bundle/cli.js, as bin/run.js loads it) is loaded once, then each job line on stdin ({args, env}) is run
// as bin/run.js would run it, and its answer ({pid, status, stdout, stderr}) is written as one line to fd 3.
// Two of them race on one tree as two processes do (their own pids, locks and file handles), without a
// process start per command.
import fs from 'node:fs';
import readline from 'node:readline';

const {run, settings} = await import('../../dist/bundle/cli.js');
settings.enableAutoTranspile = false;
const manifest = new URL('../../package.json', import.meta.url).pathname;

const out = {stdout: '', stderr: ''};
process.stdout.write = (chunk) => ((out.stdout += String(chunk)), true);
process.stderr.write = (chunk) => ((out.stderr += String(chunk)), true);
const base = {...process.env};

const jobs = readline.createInterface({input: process.stdin});
for await (const line of jobs) {
  const {args, env} = JSON.parse(line);
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, base, env);
  out.stdout = '';
  out.stderr = '';
  process.exitCode = undefined;
  let status;
  try {
    await run(args, manifest);
    status = process.exitCode ?? 0;
  } catch (error) {
    status = typeof error?.oclif?.exit === 'number' ? error.oclif.exit : 1;
    if (status !== 0 && !out.stderr) out.stderr = `${error?.stack ?? error}\n`;
  }
  process.exitCode = undefined;
  fs.writeSync(
    3,
    `${JSON.stringify({pid: process.pid, status: Number(status), stdout: out.stdout, stderr: out.stderr})}\n`,
  );
}
