// Runs the built CLI (dist/bundle/cli.js, the bundle bin/run.js loads, with
// the oclif it was bundled with) inside a worker thread, one
// command at a time, for test/helpers/cli.ts: the caller blocks on a shared
// flag until the answer is posted, so a test reads like a spawned process
// (status, stdout, stderr) at a fraction of a process start's cost.
import {parentPort, workerData} from 'node:worker_threads';

const {run, settings} = await import('../../dist/bundle/cli.js');
settings.enableAutoTranspile = false;

const out = {stdout: '', stderr: ''};
const realStdout = process.stdout.write.bind(process.stdout);
const realStderr = process.stderr.write.bind(process.stderr);
let capturing = false;
process.stdout.write = (chunk, ...rest) =>
  capturing ? ((out.stdout += String(chunk)), true) : realStdout(chunk, ...rest);
process.stderr.write = (chunk, ...rest) =>
  capturing ? ((out.stderr += String(chunk)), true) : realStderr(chunk, ...rest);

parentPort.on('message', async ({args, env, port, flag}) => {
  const saved = {...process.env};
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, env);
  out.stdout = '';
  out.stderr = '';
  process.exitCode = undefined;
  capturing = true;
  let status;
  try {
    await run(args, workerData.manifest);
    status = process.exitCode ?? 0;
  } catch (error) {
    // oclif's own exits (--help, --version) throw an ExitError carrying the code
    status = typeof error?.oclif?.exit === 'number' ? error.oclif.exit : 1;
    if (status !== 0 && !out.stderr) out.stderr = `${error?.stack ?? error}\n`;
  } finally {
    capturing = false;
    process.exitCode = undefined;
    for (const k of Object.keys(process.env)) delete process.env[k];
    Object.assign(process.env, saved);
  }
  port.postMessage({status: Number(status), stdout: out.stdout, stderr: out.stderr});
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
