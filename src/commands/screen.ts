import {WritingCommand} from '../cli/base-command.js';
import {candidateArg, evaluationFlags, runEvaluation, summary} from '../cli/evaluation-flags.js';

export default class Screen extends WritingCommand {
  static override summary = 'Run the cheap matched screen of a candidate against its parent.';
  static override description =
    'Evaluates screen-lane pairs (candidate and incumbent on the same fixture and seed) until the screen ' +
    'decides. Exit 0 screened, 3 rejected (a negative result is written), 4 the screen units ran out, 8 ' +
    'evaluator or integrity failure.';
  static override examples = ['<%= config.bin %> screen 07afe0d4 --evaluator "node eval.js" --fixtures fixtures.jsonl'];
  static override args = candidateArg;
  static override flags = evaluationFlags;

  async run() {
    const {args, flags} = await this.parse(Screen);
    const result = await runEvaluation(args.candidate, 'screen', flags);
    return this.done(result, () => summary(result));
  }
}
