import {signingKeyFlag} from '../../cli/release-flags.js';
import * as Args from '@oclif/core/args';
import {digestArg} from '../../cli/flags.js';
import {ingestTrials} from '../../core/evaluation/trials-ingest.js';
import {WritingCommand} from '../../cli/base-command.js';
import {summary} from '../../cli/evaluation-flags.js';

export default class TrialsIngest extends WritingCommand {
  static override summary = 'Bring back results computed elsewhere and apply the stopping rule in plan order.';
  static override description =
    'Input: JSON Lines {"schema":"autoctx.trial-result.v1","plan_digest","pair_key","lane","fixture","fix' +
    'ture_digest","seed","candidate":{"score","valid"?},"incumbent":{"score","valid"?}}. Only units of ' +
    'the bound plan are accepted; the same results again change nothing; a different result for a ' +
    'recorded pair is refused. An arm may also carry "metrics", "check_passed" and "artifacts" as an ' +
    'evaluator answer does (kept in trial_observations.json). Exit codes as confirm.';
  static override examples = [
    '<%= config.bin %> trials ingest bb5f26ed results.jsonl',
    'cat results/*.jsonl | <%= config.bin %> trials ingest bb5f26ed - --json',
  ];
  static override flags = {'signing-key': signingKeyFlag};
  static override args = {
    candidate: digestArg('the candidate', 'Candidate bundle digest or a unique prefix.'),
    file: Args.string({description: 'Results file (JSON Lines), or - for stdin.', required: true}),
  };

  async run() {
    const {args, flags} = await this.parse(TrialsIngest);
    const result = await ingestTrials({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      candidate: args.candidate,
      file: args.file,
      lockTimeout: flags['lock-timeout'],
      signingKey: flags['signing-key'],
    });
    return this.done(result, () => [
      ...summary(result),
      `  ingested ${result.ingested}, already recorded ${result.already_recorded}, discarded past the ` +
        `decision ${result.discarded}`,
    ]);
  }
}
