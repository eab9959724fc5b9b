import * as Flags from '@oclif/core/flags';
import {ScenarioCommand} from '../../cli/base-command.js';
import {integerFlag, secondsFlag, sourceFlag, textFlag} from '../../cli/flags.js';
import {paint, short} from '../../cli/style.js';
import {DEFAULT_EVALUATOR_TIMEOUT_SECONDS} from '../../core/common/defaults.js';
import {withTeamDefaults} from '../../core/common/team-defaults.js';
import {
  checkEvaluator,
  DEFAULT_CHECK_PAIRS,
  MAX_CHECK_PAIRS,
  type CheckExchange,
} from '../../core/evaluation/evaluator-check.js';

/** One line of JSON, cut for the terminal (--json has it whole). */
const line = (value: unknown, max = 240) => {
  const text = JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

function exchangeLines(x: CheckExchange): string[] {
  const {request: r} = x;
  const head = `${r.arm} ${r.fixture} (lane ${r.lane}, seed ${r.seed})`;
  // What differs from request to request; --json has every field.
  const sent = line({
    request_id: r.request_id,
    bundle_dir: r.bundle_dir,
    initial_state: r.initial_state,
    observation: r.observation,
  });
  if (x.answer) return [`${paint.green('ok')} ${head}`, `  → ${sent}`, `  ← ${line(x.answer)}`];
  return [
    `${paint.red('failed')} ${head}`,
    `  → ${sent}`,
    `  ✗ ${x.error!.code}: ${x.error!.message}`,
    ...(x.error!.stderr_tail ?? []).map((l) => `  | ${l}`),
  ];
}

export default class EvaluatorCheck extends ScenarioCommand {
  static override summary = 'Try an evaluator on the active bundle against itself; writes nothing and binds nothing.';
  static override description =
    'Runs a few pairs (default 2) of the active bundle against itself, each arm in its own scratch copy, ' +
    'and shows every request and answer. Nothing in the knowledge tree is written, no plan is bound, and ' +
    'no candidate is ever scored: that would observe a candidate outside its plan and its campaign. Exit ' +
    "8 at the first failure, with the evaluator's stderr.";
  static override examples = [
    '<%= config.bin %> evaluator check --evaluator "node evaluator.js" --fixtures fixtures.jsonl',
  ];
  static override flags = {
    evaluator: textFlag('evaluator', {
      summary:
        'Evaluator command, run through sh -c, as screen and confirm would run it; default: "evaluator" in ' +
        'autoctx.config.json.',
      helpValue: 'CMD',
    }),
    fixtures: sourceFlag('fixtures', {
      summary: 'Fixtures file (JSON Lines); its first fixtures are used; default: "fixtures" in autoctx.config.json.',
    }),
    pairs: integerFlag('pairs', {
      summary: `Pairs to run (default ${DEFAULT_CHECK_PAIRS}, at most ${MAX_CHECK_PAIRS}).`,
      min: 1,
      max: MAX_CHECK_PAIRS,
      helpValue: 'N',
    }),
    'evaluator-mode': Flags.string({
      summary: 'per-arm (default) or persistent (JSON Lines).',
      options: ['per-arm', 'persistent'],
      helpValue: 'MODE',
    }),
    timeout: secondsFlag('timeout', {
      summary: `Seconds per arm before the evaluator is stopped (default ${DEFAULT_EVALUATOR_TIMEOUT_SECONDS}).`,
    }),
  };

  async run() {
    const {flags} = await this.parse(EvaluatorCheck);
    const o = withTeamDefaults(
      {
        knowledge: flags.knowledge,
        scenario: flags.scenario,
        evaluator: flags.evaluator,
        evaluatorMode: flags['evaluator-mode'] as 'per-arm' | 'persistent' | undefined,
        fixtures: flags.fixtures,
      },
      ['evaluator', 'evaluator_mode', 'fixtures'],
    );
    const r = await checkEvaluator({
      ...o,
      evaluator: o.evaluator!,
      evaluatorMode: o.evaluatorMode as 'per-arm' | 'persistent' | undefined,
      pairs: flags.pairs,
      timeoutSeconds: flags.timeout,
    });
    return this.done(r, () => [
      ...r.exchanges.flatMap(exchangeLines),
      r.status === 'ok'
        ? `${paint.green('the evaluator answered')} ${r.exchanges.length} requests on ${r.pairs} pairs of ` +
          `${short(r.bundle_digest)} against itself; nothing was written or bound`
        : `${paint.red('the evaluator failed')} on request ${r.exchanges.length}; nothing was written or bound`,
    ]);
  }
}
