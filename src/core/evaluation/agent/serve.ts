import path from 'node:path';
import {fail, isJsonParseError, rethrowUnless} from '../../../errors.js';
import {REQUEST_SCHEMA, type EvaluationRequest} from '../../../evaluator/protocol.js';
import {TRIAL_RESULT_SCHEMA} from '../trials-ingest.js';
import {agentTaskOf, type AgentTask} from '../../../model/evaluation/agent/task.js';
import {fixtureDigest} from '../../../model/evaluation/fixtures.js';
import {knowledgeRootFrom, schemaProblem} from '../../../store/index.js';
import {isFolder, removeFolder, treeDigest} from '../../../store/io/agent-files.js';
import {AGENT_HOSTS, type AgentHost} from './hosts.js';
import {guardFolder} from './bounded-process.js';
import {SessionHomes} from './session-home.js';
import {runTrial, type AgentAnswer, type TrialSetup} from './trial.js';

export const DEFAULT_TRIAL_TIMEOUT_SECONDS = 600;

export interface AgentEvaluatorOptions {
  host: string;
  tasks: string;
  hostBin?: string | undefined;
  hostArgs?: readonly string[] | undefined;
  trialTimeoutSeconds?: number | undefined;
  model?: string | undefined;
  keepWorkspaces?: boolean | undefined;
  /** The knowledge tree, when the environment does not name its state area (a run by hand). */
  knowledge?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/** The arms' setup, every flag checked (USAGE, exit 2) before a request is read. */
function setupOf(o: AgentEvaluatorOptions, note: (line: string) => void): TrialSetup {
  const env = o.env ?? process.env;
  if (!(AGENT_HOSTS as readonly string[]).includes(o.host))
    fail('USAGE', `--host must be one of ${AGENT_HOSTS.join(', ')}, got ${JSON.stringify(o.host)}`);
  const host = o.host as AgentHost;
  if (!isFolder(o.tasks)) fail('USAGE', `--tasks ${o.tasks} is not a folder`);
  const timeout = o.trialTimeoutSeconds ?? DEFAULT_TRIAL_TIMEOUT_SECONDS;
  if (!Number.isFinite(timeout) || timeout <= 0) fail('USAGE', '--trial-timeout must be a positive number of seconds');
  if (o.model !== undefined && o.model.trim() === '') fail('USAGE', '--model must name a model');
  const stateEnv = env.AUTOCTX_STATE_DIR;
  if (stateEnv !== undefined && stateEnv !== '' && !path.isAbsolute(stateEnv))
    fail('USAGE', `AUTOCTX_STATE_DIR must be an absolute folder, got ${JSON.stringify(stateEnv)}`);
  // The tree being evaluated: the one whose state area autoctx names, else --knowledge (or where it is found).
  const knowledge = stateEnv ? path.dirname(stateEnv) : knowledgeRootFrom(o.knowledge, env);
  const stateDir = stateEnv || path.join(knowledge, '.state');
  const artifactEnv = env.AUTOCTX_ARTIFACT_DIR;
  if (artifactEnv !== undefined && artifactEnv !== '' && !path.isAbsolute(artifactEnv))
    fail('USAGE', `AUTOCTX_ARTIFACT_DIR must be an absolute folder, got ${JSON.stringify(artifactEnv)}`);
  return {
    host,
    // A path (it holds a slash) is the caller's, relative to where autoctx runs, not to the scratch workspace.
    hostBin:
      o.hostBin === undefined
        ? host === 'claude-code'
          ? 'claude'
          : 'codex'
        : o.hostBin.includes('/')
          ? path.resolve(o.hostBin)
          : o.hostBin,
    hostArgs: o.hostArgs ?? [],
    model: o.model,
    tasksDir: path.resolve(o.tasks),
    trialTimeoutSeconds: timeout,
    keepWorkspaces: o.keepWorkspaces === true,
    stateDir,
    artifactDir: artifactEnv || path.join(stateDir, 'artifacts'),
    env,
    homes: new SessionHomes(host, knowledge),
    pending: new Set(),
    note,
  };
}

function jsonLine(line: string, what: string): unknown {
  try {
    return JSON.parse(line);
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    fail('INVALID_INPUT', `a ${what} line is not JSON: ${JSON.stringify(line.slice(0, 120))}`);
  }
}

/** A request line, checked: the protocol's request, an agent task, and a fixture digest that attests its content. */
export function parseRequest(line: string): {request: EvaluationRequest; task: AgentTask} {
  return checkRequest(jsonLine(line, 'request'));
}

function checkRequest(value: unknown): {request: EvaluationRequest; task: AgentTask} {
  const problem = schemaProblem('evaluation-request', value);
  if (problem) fail('INVALID_INPUT', `a request line is not an ${REQUEST_SCHEMA} request: ${problem}`);
  const request = value as EvaluationRequest;
  const where = `fixture ${JSON.stringify(request.fixture)}`;
  const parts = {initial_state: request.initial_state, observation: request.observation};
  const taskProblem = schemaProblem('agent-task', parts);
  if (taskProblem)
    fail('INVALID_INPUT', `${where} is not an agent task (schemas/agent-task.schema.json): ${taskProblem}`);
  if (fixtureDigest(request.initial_state, request.observation) !== request.fixture_digest)
    fail('INTEGRITY', `${where}: its fixture_digest is not the digest of its initial_state and observation`);
  return {request, task: agentTaskOf(parts as Parameters<typeof agentTaskOf>[0])};
}

/** Answer every non-blank line of `lines` in order with `answer`'s one line; then end the arms' scratch homes. */
async function serveLines(
  o: AgentEvaluatorOptions,
  lines: AsyncIterable<string>,
  write: (line: string) => void,
  note: (line: string) => void,
  answer: (line: string, setup: ReturnType<typeof setupOf>) => Promise<unknown>,
): Promise<{answered: number}> {
  const setup = setupOf(o, note);
  let answered = 0;
  try {
    for await (const line of lines) {
      if (line.trim() === '') continue;
      write(`${JSON.stringify(await answer(line, setup))}\n`);
      answered++;
    }
  } finally {
    await Promise.all(setup.pending);
    for (const dir of setup.homes.folders()) {
      removeFolder(dir);
      guardFolder(dir, false);
    }
  }
  return {answered};
}

/**
 * The agent evaluator: every request line read from `lines` is answered with one line through `write`, in order,
 * echoing its request_id (per-arm mode is one line, then the end of input; persistent mode, as many as come). An
 * error ends it (the caller exits with its code): autoctx then records nothing for that pair.
 */
export function serveAgent(
  o: AgentEvaluatorOptions,
  lines: AsyncIterable<string>,
  write: (line: string) => void,
  note: (line: string) => void,
): Promise<{answered: number}> {
  return serveLines(o, lines, write, note, async (line, setup): Promise<AgentAnswer> => {
    const {request, task} = parseRequest(line);
    return runTrial(request, task, setup);
  });
}

/** A work unit of `autoctx plan export`, as the two requests of its arms, in its arm order. */
function unitRequests(line: string): Array<{request: EvaluationRequest; task: AgentTask}> {
  const unit = jsonLine(line, 'work unit') as Record<string, unknown>;
  const problem = schemaProblem('work-unit', unit);
  if (problem) fail('INVALID_INPUT', `a work unit line is not an autoctx.work-unit.v1 unit: ${problem}`);
  return (unit.arm_order as Array<'candidate' | 'incumbent'>).map((arm) =>
    checkRequest({
      schema: REQUEST_SCHEMA,
      request_id: `${String(unit.pair_key)}:${arm}`,
      arm,
      scenario: unit.scenario,
      bundle_digest: arm === 'candidate' ? unit.candidate_digest : unit.incumbent_digest,
      // The agent evaluator delivers from the tree (the pinned hook), never from a materialized copy.
      bundle_dir: '',
      evaluator_epoch: unit.evaluator_epoch,
      cohort: unit.cohort,
      lane: unit.lane,
      fixture: unit.fixture,
      fixture_digest: unit.fixture_digest,
      seed: unit.seed,
      plan_digest: unit.plan_digest,
      initial_state: unit.initial_state,
      observation: unit.observation,
    }),
  );
}

/**
 * The exported-unit path (`--units`): every work unit line of `autoctx plan export` is run, both arms in its arm
 * order, and answered with one result line `autoctx trials ingest` takes: the unit's identity and each arm's score,
 * checker verdict, metrics and artifacts.
 */
export function serveUnits(
  o: AgentEvaluatorOptions,
  lines: AsyncIterable<string>,
  write: (line: string) => void,
  note: (line: string) => void,
): Promise<{answered: number}> {
  return serveLines(o, lines, write, note, async (line, setup) => {
    const arms: Partial<Record<'candidate' | 'incumbent', Omit<AgentAnswer, 'request_id' | 'fixture_digest'>>> = {};
    let first: EvaluationRequest | null = null;
    for (const {request, task} of unitRequests(line)) {
      first ??= request;
      const {request_id: _id, fixture_digest: _digest, ...arm} = await runTrial(request, task, setup);
      arms[request.arm] = arm;
    }
    const u = first!;
    const pairKey = u.request_id.slice(0, u.request_id.lastIndexOf(':'));
    const {plan_digest, lane, fixture, fixture_digest, seed} = u;
    const result = {schema: TRIAL_RESULT_SCHEMA, plan_digest, pair_key: pairKey, lane, fixture, fixture_digest, seed};
    return {...result, candidate: arms.candidate, incumbent: arms.incumbent};
  });
}

/** `--tree-digest DIR`: the tree digest of a task folder, as a fixture's `dir_digest` names it. */
export function taskTreeDigest(dir: string): {status: 'ok'; dir: string; tree_digest: string} {
  if (!isFolder(dir)) fail('USAGE', `--tree-digest ${dir} is not a folder`);
  return {status: 'ok', dir: path.resolve(dir), tree_digest: treeDigest(dir)};
}
