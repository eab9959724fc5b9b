import path from 'node:path';
import {fail} from '../../../errors.js';
import type {EvaluationRequest} from '../../../evaluator/protocol.js';
import {
  ARTIFACT_LIMITS,
  boundedText,
  workspaceDiff,
  type AgentTask,
  type ArtifactName,
} from '../../../model/evaluation/agent/task.js';
import {
  changedFiles,
  copyHashed,
  copyTree,
  digestOfFiles,
  digestOfTexts,
  makeFolder,
  preparedFixture,
  readTextIfPresent,
  realFolder,
  removeFolder,
  removeFolderLater,
  scratchFolder,
  treeDigest,
  writeArtifact,
  writeText,
  writeTexts,
  type PreparedFixture,
} from '../../../store/io/agent-files.js';
import {guardFolder, runBounded} from './bounded-process.js';
import {runChecker} from './checker.js';
import {codexConfig, hostArgs, hostEnv, hostReport, scratchLayout, type AgentHost, type Scratch} from './hosts.js';
import type {SessionHomes} from './session-home.js';

export interface TrialSetup {
  host: AgentHost;
  /** The host's program: a name looked up on PATH, or a path. */
  hostBin: string;
  hostArgs: readonly string[];
  model: string | undefined;
  tasksDir: string;
  trialTimeoutSeconds: number;
  keepWorkspaces: boolean;
  stateDir: string;
  artifactDir: string;
  /** The evaluator's own environment: what the host may see of it is chosen from it, the checker gets it. */
  env: NodeJS.ProcessEnv;
  homes: SessionHomes;
  /** Scratch folders still being removed: awaited before the evaluator ends. */
  pending: Set<Promise<void>>;
  /** A line for the evaluator's stderr (a kept workspace's folder). */
  note: (line: string) => void;
}

export interface AgentAnswer {
  request_id: string;
  score: number;
  fixture_digest: string;
  check_passed: boolean;
  metrics: {latency_ms: number; input_tokens?: number; output_tokens?: number; cost_usd?: number};
  artifacts: Partial<Record<ArtifactName, string>>;
}

/** The prepared state of the request's fixture (materialized once: never built again once there). */
function prepare(task: AgentTask, request: EvaluationRequest, setup: TrialSetup): PreparedFixture {
  const prepared = preparedFixture(setup.stateDir, request.fixture_digest, (tree) => {
    if (task.dir !== null) {
      const root = realFolder(setup.tasksDir)!;
      const source = realFolder(path.join(root, ...task.dir.split('/')));
      if (source === null || (source !== root && !source.startsWith(root + path.sep)))
        fail('INVALID_INPUT', `the task folder "${task.dir}" is not a folder inside --tasks ${setup.tasksDir}`);
      if (task.dirDigest !== null) {
        const found = treeDigest(source);
        if (found !== task.dirDigest)
          fail(
            'INTEGRITY',
            `the task folder ${source} has the tree digest ${found}, not the ${task.dirDigest} its fixture ` +
              `names: it changed since the fixture was written`,
          );
      }
      removeFolder(tree);
      copyTree(source, tree);
    }
    writeTexts(tree, task.files);
  });
  // A task of text files alone: the digest it must have follows from the fixture itself.
  if (task.dir === null && prepared.digest !== digestOfTexts(task.files)) tampered(prepared, 'its recorded digest');
  return prepared;
}

function tampered(prepared: PreparedFixture, what: string): never {
  fail(
    'INTEGRITY',
    `the prepared state of this fixture (${prepared.dir}) is not what was materialized (${what} differs); ` +
      `nothing was scored. It is never prepared again on its own: remove that folder to prepare it afresh`,
    {file: prepared.dir},
  );
}

/** Make the workspace a git repository holding the initial state as one commit, the same bytes every time. */
async function gitInit(s: Scratch, env: NodeJS.ProcessEnv): Promise<void> {
  const git = {
    ...env,
    GIT_AUTHOR_NAME: 'autoctx',
    GIT_AUTHOR_EMAIL: 'autoctx@localhost',
    GIT_COMMITTER_NAME: 'autoctx',
    GIT_COMMITTER_EMAIL: 'autoctx@localhost',
    GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
    GIT_CONFIG_NOSYSTEM: '1',
    HOME: s.home,
  };
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '--allow-empty', '--no-gpg-sign', '-m', 'initial state'],
  ]) {
    const r = await runBounded('git', args, {cwd: s.work, env: git, timeoutMs: 60_000});
    if (r.code !== 0)
      fail('EVALUATOR_FAILED', `git ${args[0]} in the workspace failed: ${r.spawnError ?? r.stderr.text().trim()}`);
  }
}

/**
 * One arm of one pair, on the agent: the fixture's prepared state copied into a fresh workspace and checked against
 * its recorded tree digest before the host starts; the host headless in a clean session with the arm's bundle pinned
 * for autoctx's hooks, asked the fixture's prompt and nothing else, within the trial's budget; then the checker, its
 * files copied in only now; the artifacts kept. A failure of anything but the agent (a tampered preparation, a host
 * that cannot run, an API refusing) is an error: nothing is scored for it.
 */
export async function runTrial(request: EvaluationRequest, task: AgentTask, setup: TrialSetup): Promise<AgentAnswer> {
  const prepared = prepare(task, request, setup);
  setup.homes.checkDeliverable(request.scenario, request.bundle_digest);
  const s = scratchLayout(scratchFolder());
  guardFolder(s.root, true);
  try {
    const copied = copyHashed(prepared.tree, s.work);
    if (digestOfFiles(copied) !== prepared.digest) tampered(prepared, 'its tree');
    for (const d of [s.tmp, s.out]) makeFolder(d);
    setup.homes.copyTo(request.scenario, s.home);
    if (setup.host === 'codex')
      writeText(path.join(s.home, '.codex', 'config.toml'), codexConfig(s.work, setup.env, setup.model));
    if (task.git) await gitInit(s, hostEnv(setup.host, setup.env, s, request.bundle_digest));
    const budget = setup.trialTimeoutSeconds * 1000;
    const run = await runBounded(setup.hostBin, hostArgs(setup.host, s, setup.model, setup.hostArgs), {
      cwd: s.work,
      env: hostEnv(setup.host, setup.env, s, request.bundle_digest),
      timeoutMs: budget,
      stdin: task.prompt,
    });
    if (run.spawnError !== undefined)
      fail(
        'EVALUATOR_FAILED',
        `could not start the ${setup.host} ` + `host ${JSON.stringify(setup.hostBin)}:` + ` ${run.spawnError}`,
      );
    const report = hostReport(
      setup.host,
      run.stdout.tailText(),
      run.code,
      run.ms,
      readTextIfPresent(path.join(s.out, 'last-message.txt')),
    );
    if (!run.timedOut && report.failure !== null)
      fail(
        'EVALUATOR_FAILED',
        `${report.failure}; stderr: ` + `${run.stderr.text().trim().split('\n').slice(-3).join(' | ')}`,
      );
    const diff = workspaceDiff(changedFiles(prepared.tree, s.work, copied, task.git ? ['.git'] : []));
    const answerFile = path.join(s.out, 'final_answer.txt');
    writeText(answerFile, report.finalAnswer ?? '');
    let check: {score: number; passed: boolean; output: string};
    if (run.timedOut) {
      check = {
        score: 0,
        passed: false,
        output: `not run: the agent was stopped at the trial's ` + `budget of ${setup.trialTimeoutSeconds} s\n`,
      };
    } else {
      writeTexts(s.work, task.checker.files);
      check = await runChecker(task, s.work, answerFile, setup.env);
    }
    const stopped = run.timedOut
      ? `\n[stopped by autoctx at the trial's ` + `budget of ${setup.trialTimeoutSeconds} s]\n`
      : '';
    const stderr = run.stderr.total > 0 ? `\n--- the host's stderr ---\n${run.stderr.text()}` : '';
    const kept: Array<[ArtifactName, string | null]> = [
      ['final_answer', report.finalAnswer],
      ['transcript', `${run.stdout.text()}${stopped}${stderr}`],
      ['diff', diff],
      ['check_output', check.output],
    ];
    const artifacts: Partial<Record<ArtifactName, string>> = {};
    for (const [name, text] of kept)
      if (text !== null && text !== '')
        artifacts[name] = writeArtifact(
          setup.artifactDir,
          Buffer.from(boundedText(text, ARTIFACT_LIMITS[name]), 'utf8'),
        );
    return {
      request_id: request.request_id,
      score: check.score,
      fixture_digest: request.fixture_digest,
      check_passed: check.passed,
      metrics: run.timedOut ? {latency_ms: run.ms} : report.metrics,
      artifacts,
    };
  } finally {
    if (setup.keepWorkspaces) {
      guardFolder(s.root, false);
      setup.note(`autoctx evaluator agent: kept ${s.root}`);
    } else {
      const gone: Promise<void> = removeFolderLater(s.root).then(() => {
        guardFolder(s.root, false);
        setup.pending.delete(gone);
      });
      setup.pending.add(gone);
    }
  }
}
