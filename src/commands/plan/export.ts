import * as Flags from '@oclif/core/flags';
import {exportPlan} from '../../core/evaluation/plan-export.js';
import {WritingCommand} from '../../cli/base-command.js';
import {candidateArg, evaluationFlags, evaluationOptions} from '../../cli/evaluation-flags.js';
import {textFlag} from '../../cli/flags.js';
import {AutoctxError} from '../../errors.js';

const {
  evaluator: _e,
  'evaluator-mode': _m,
  concurrency: _c,
  timeout: _t,
  quiet: _q,
  audit: _a,
  artifacts: _r,
  ...shared
} = evaluationFlags;

export default class PlanExport extends WritingCommand {
  static override summary = 'Bind the plan for external evaluation and write its open work units as JSON Lines.';
  static override description =
    'Every line holds what an evaluator request holds for both arms (fixture, seed, lane, plan digest, ' +
    'pair key, arm order, initial state and observation). Run them with any engine and bring the results ' +
    'back with autoctx trials ingest.';
  static override examples = [
    '<%= config.bin %> plan export bb5f26ed --engine k8s-eval:v3 --fixtures fixtures.jsonl --out units.jsonl',
  ];
  static override args = candidateArg;
  static override flags = {
    ...shared,
    engine: textFlag('engine', {
      summary: 'A label naming the engine that will evaluate; bound into the plan as the evaluator identity.',
      required: true,
      helpValue: 'LABEL',
    }),
    out: Flags.string({
      summary: 'Where to write the JSON Lines (- for stdout, then without --json).',
      required: true,
      helpValue: 'FILE',
    }),
  };

  async run() {
    const {args, flags} = await this.parse(PlanExport);
    if (flags.out === '-' && this.jsonEnabled())
      throw new AutoctxError(
        'USAGE',
        '--out - writes the units to stdout, which --json needs for the result; write them to a file',
      );
    if (flags.out.trim() === '') throw new AutoctxError('USAGE', '--out must name a file, or - for stdout');
    // The engine is the evaluator identity here: only the fixtures and the policy come from autoctx.config.json.
    const options = evaluationOptions(
      args.candidate,
      'confirm',
      {...flags, evaluator: flags.engine, quiet: true},
      undefined,
      ['fixtures', 'policy'],
    );
    const result = await exportPlan({...options, out: flags.out === '-' ? null : flags.out});
    if (flags.out === '-') {
      process.stdout.write(result.lines.length ? `${result.lines.join('\n')}\n` : '');
      return result.summary;
    }
    return this.done(result.summary, () => [
      `exported ${result.summary.units} open units of plan ${result.summary.plan_digest.slice(0, 12)} to ${flags.out}`,
    ]);
  }
}
