import {createInterface} from 'node:readline';
import * as Flags from '@oclif/core/flags';
import {AutoctxCommand, storeFlags} from '../../cli/base-command.js';
import {secondsFlag, textFlag} from '../../cli/flags.js';
import {fail} from '../../errors.js';
import {
  DEFAULT_TRIAL_TIMEOUT_SECONDS,
  serveAgent,
  serveUnits,
  taskTreeDigest,
} from '../../core/evaluation/agent/serve.js';

export default class EvaluatorAgent extends AutoctxCommand {
  static override summary =
    'The shipped agent evaluator: runs Claude Code or Codex on agent tasks, each arm with its own bundle.';
  static override description =
    'An evaluator command for screen, confirm and evaluator check (--evaluator "autoctx evaluator agent --host ' +
    'claude-code --tasks DIR", per-arm or persistent): for each request it copies the fixture\'s prepared state ' +
    'into a fresh workspace (checked against its tree digest first), runs the host headless in a clean session ' +
    "with the arm's bundle delivered by autoctx's own hooks, asks it the fixture's prompt and nothing else, runs " +
    "the fixture's checker, and answers with the score, the host's usage figures and the artifacts it kept. " +
    'Answers go to stdout, one line per request; errors to stderr. See docs/agent-evaluator.md.';
  static override examples = [
    '<%= config.bin %> screen CANDIDATE --evaluator "autoctx evaluator agent --host claude-code --tasks tasks" ' +
      '--evaluator-mode persistent --fixtures tasks/fixtures.jsonl',
    '<%= config.bin %> evaluator agent --units --host codex --tasks tasks < units.jsonl > results.jsonl',
    '<%= config.bin %> evaluator agent --tree-digest tasks/fix-the-bug',
  ];
  // Its stdout is the protocol's: answers only, errors on stderr.
  static override enableJsonFlag = false;
  static override flags = {
    host: Flags.string({summary: 'The agent host.', options: ['claude-code', 'codex'], helpValue: 'HOST'}),
    tasks: textFlag('tasks', {
      summary: 'The folder that task folders ("dir" ' + 'of a fixture) are relative to.',
      helpValue: 'DIR',
    }),
    'host-bin': textFlag('host-bin', {
      summary: 'The host program (default: claude or codex, looked up on PATH).',
      helpValue: 'PATH',
    }),
    'host-arg': Flags.string({
      summary: 'An argument added to the host command line (repeatable), e.g. --max-turns for Claude Code.',
      helpValue: 'ARG',
      multiple: true,
    }),
    'trial-timeout': secondsFlag('trial-timeout', {
      summary:
        `The agent's wall-clock budget per trial (default ${DEFAULT_TRIAL_TIMEOUT_SECONDS}); ` +
        `past it the agent is stopped and the trial scores 0.`,
    }),
    model: textFlag('model', {summary: "The host's model (default: the host's own).", helpValue: 'MODEL'}),
    'keep-workspaces': Flags.boolean({summary: "Keep each arm's scratch folder (its path is written on stderr)."}),
    units: Flags.boolean({
      summary:
        'Read work units (autoctx plan export) instead of requests, run both arms of each, and write result lines ' +
        'for autoctx trials ingest.',
    }),
    knowledge: storeFlags.knowledge,
    'tree-digest': textFlag('tree-digest', {
      summary: "Print a task folder's tree digest (a fixture's dir_digest) and exit.",
      helpValue: 'DIR',
    }),
  };

  async run() {
    valueFlagsHaveValues(this.argv);
    const {flags} = await this.parse(EvaluatorAgent);
    if (flags['tree-digest'] !== undefined) {
      process.stdout.write(`${taskTreeDigest(flags['tree-digest']).tree_digest}\n`);
      return;
    }
    if (flags.host === undefined) fail('USAGE', '--host is required (claude-code or codex)');
    if (flags.tasks === undefined) fail('USAGE', '--tasks is required: the folder of the agent tasks');
    const lines = createInterface({input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY});
    // An error ends the evaluator at once, even while autoctx keeps its stdin open (persistent mode).
    try {
      await (flags.units ? serveUnits : serveAgent)(
        {
          host: flags.host,
          tasks: flags.tasks,
          hostBin: flags['host-bin'],
          hostArgs: flags['host-arg'],
          trialTimeoutSeconds: flags['trial-timeout'],
          model: flags.model,
          keepWorkspaces: flags['keep-workspaces'],
          knowledge: flags.knowledge,
        },
        lines,
        (line) => process.stdout.write(line),
        (line) => process.stderr.write(`${line}\n`),
      );
    } finally {
      process.stdin.destroy();
    }
  }
}

const VALUE_FLAGS = new Map<string, string>([
  ...['host', 'tasks', 'host-bin', 'host-arg', 'trial-timeout', 'model', 'knowledge', 'tree-digest'].map(
    (n) => [`--${n}`, `--${n}`] as const,
  ),
  ['-k', '--knowledge'] as const,
]);

/**
 * A value flag followed by a word that starts with "-" was given without its value (the command has no --json, so
 * oclif would read `--tasks --json` as the folder "--json"): a value that starts with "-" is given as --flag=VALUE.
 */
function valueFlagsHaveValues(argv: readonly string[]): void {
  for (let i = 0; i + 1 < argv.length && argv[i] !== '--'; i++) {
    const flag = VALUE_FLAGS.get(argv[i]!);
    if (flag !== undefined && argv[i + 1]!.startsWith('-'))
      fail(
        'USAGE',
        `${flag} needs a value: ${JSON.stringify(argv[i + 1])} follows it (a value that starts with "-" is given as ` +
          `${flag}=VALUE)`,
      );
  }
}
