import {WritingCommand} from '../cli/base-command.js';
import {candidateArg, evaluationFlags, runEvaluation, summary} from '../cli/evaluation-flags.js';

export default class Confirm extends WritingCommand {
  static override summary = 'Evaluate a candidate to a decision: screen, adaptive confirmation, held-out lane.';
  static override description =
    'Runs matched pairs in plan order and stops as soon as the decision is reached. A killed run started ' +
    'again resumes without re-evaluating recorded pairs. Exit 0 confirmed, 3 rejected or inconclusive (a ' +
    'negative result is written), 4 the available units ran out, 8 evaluator or integrity failure.';
  static override examples = [
    '<%= config.bin %> confirm 07afe0d4 --evaluator "node eval.js" --fixtures fixtures.jsonl',
    '<%= config.bin %> confirm 07afe0d4 --evaluator "python3 eval.py" --evaluator-mode persistent ' +
      '--concurrency 4 --fixtures f.jsonl --json',
  ];
  static override args = candidateArg;
  static override flags = evaluationFlags;

  async run() {
    const {args, flags} = await this.parse(Confirm);
    const result = await runEvaluation(args.candidate, 'confirm', flags);
    return this.done(result, () => summary(result));
  }
}
