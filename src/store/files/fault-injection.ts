import fs from 'node:fs';
import path from 'node:path';

/**
 * Crash injection, a testing aid (docs/guarantees.md): AUTOCTX_FAULT=<n>:before
 * kills the process with SIGKILL right before the n-th durable write of the
 * process is published (after its data is flushed), <n>:after right after it
 * (and its folder) are durable. AUTOCTX_FAULT_TRACE=<file> appends one line per
 * fault point reached, so a test can enumerate them.
 */
let durableWrites = 0;
export function faultPoint(phase: 'before' | 'after', target: string): void {
  const fault = process.env.AUTOCTX_FAULT;
  const trace = process.env.AUTOCTX_FAULT_TRACE;
  if (!fault && !trace) return;
  if (phase === 'before') durableWrites++;
  const point = `${durableWrites}:${phase}`;
  if (trace) fs.appendFileSync(trace, `${point} ${path.basename(target)}\n`);
  if (fault === point) process.kill(process.pid, 'SIGKILL');
}
