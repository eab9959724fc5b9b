import {fail, isJsonParseError, rethrowUnless} from '../../../errors.js';
import {PIN_VARIABLE} from '../../../model/delivery/hook-pin.js';
import type {AgentTask} from '../../../model/evaluation/agent/task.js';
import {runBounded} from './bounded-process.js';

/** The checker's verdict: its score, whether it passed (exit 0), and what it printed. */
export interface CheckResult {
  score: number;
  passed: boolean;
  output: string;
}

/**
 * The score a checker printed as its last line of stdout, `{"score": x}` with x from 0 to 1; undefined when its last
 * line is no such object (its exit code decides). A `score` that is not a number from 0 to 1 is the checker's fault:
 * nothing is scored.
 */
export function scoreLine(stdout: string): number | undefined {
  const last = stdout.trimEnd().split('\n').at(-1)?.trim() ?? '';
  if (!last.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(last);
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !('score' in value)) return undefined;
  const score = (value as {score: unknown}).score;
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1)
    fail('EVALUATOR_FAILED', `the checker printed a score that is not a number from 0 to 1: ${last.slice(0, 120)}`);
  return score;
}

/**
 * Run the fixture's checker in the workspace after the agent stopped: its argv without a shell, the evaluator's
 * environment with AUTOCTX_FINAL_ANSWER naming the file that holds the agent's final answer, within its own budget.
 * Exit 0 passes (score 1), anything else fails (score 0), unless its last stdout line gives the score; a checker past
 * its budget fails (the agent's work may be what hangs). One that cannot be started is the fixture's fault: an error.
 */
export async function runChecker(
  task: AgentTask,
  workspace: string,
  answerFile: string,
  env: NodeJS.ProcessEnv,
): Promise<CheckResult> {
  const [file, ...args] = task.checker.command;
  const {[PIN_VARIABLE]: _pin, ...rest} = env;
  const r = await runBounded(file!, args, {
    cwd: workspace,
    env: {...rest, AUTOCTX_FINAL_ANSWER: answerFile},
    timeoutMs: task.checker.timeoutSeconds * 1000,
    keep: 64 * 1024,
  });
  if (r.spawnError !== undefined)
    fail('EVALUATOR_FAILED', `could not start the checker ${JSON.stringify(file)}: ${r.spawnError}`);
  const how = r.timedOut
    ? `stopped at its budget of ${task.checker.timeoutSeconds} s`
    : r.signal
      ? `killed by ${r.signal}`
      : `exit ${r.code}`;
  const output = `checker: ${how}\n--- stdout ---\n${r.stdout.text()}\n--- stderr ---\n${r.stderr.text()}`;
  if (r.timedOut) return {score: 0, passed: false, output};
  const passed = r.code === 0;
  const printed = r.stdout.whole ? scoreLine(r.stdout.text()) : scoreLine(r.stdout.tailText());
  return {score: printed ?? (passed ? 1 : 0), passed, output};
}
