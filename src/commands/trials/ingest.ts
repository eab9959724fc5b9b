import {Args} from '@oclif/core';
import {ingestTrials} from '../../core/scale-out.js';
import {AutoctxCommand, lockFlags, parseLockTimeout, storeFlags} from '../../cli/base-command.js';
import {exitCodeFor, summary} from '../../cli/evaluation-flags.js';

export default class TrialsIngest extends AutoctxCommand {
  static override summary = 'Bring back results computed elsewhere and apply the stopping rule in plan order.';
  static override description =
    'Input: JSON Lines {"schema":"autoctx.trial-result.v1","plan_digest","pair_key","lane","fixture","fixture_digest","seed","candidate":{"score","valid"?},"incumbent":{"score","valid"?}}. Only units of the bound plan are accepted; the same results again change nothing; a different result for a recorded pair is refused. Exit codes as confirm.';
  static override examples = ['<%= config.bin %> trials ingest bb5f26ed results.jsonl', 'cat results/*.jsonl | <%= config.bin %> trials ingest bb5f26ed - --json'];
  static override args = {
    candidate: Args.string({description: 'Candidate bundle digest or a unique prefix.', required: true}),
    file: Args.string({description: 'Results file (JSON Lines), or - for stdin.', required: true}),
  };
  static override flags = {...storeFlags, ...lockFlags};

  async run() {
    const {args, flags} = await this.parse(TrialsIngest);
    const result = await ingestTrials({knowledge: flags.knowledge, scenario: flags.scenario, candidate: args.candidate, file: args.file, lockTimeout: parseLockTimeout(flags['lock-timeout'])});
    return this.done(result, () => [...summary(result), `  ingested ${result.ingested}, already recorded ${result.already_recorded}, discarded past the decision ${result.discarded}`], exitCodeFor(result));
  }
}
