import {writeFileSync} from 'node:fs';
import {Flags} from '@oclif/core';
import {exportPlan} from '../../core/scale-out.js';
import {AutoctxCommand} from '../../cli/base-command.js';
import {candidateArg, evaluationFlags, evaluationOptions} from '../../cli/evaluation-flags.js';
import {AutoctxError} from '../../errors.js';

const {evaluator: _e, 'evaluator-mode': _m, concurrency: _c, timeout: _t, quiet: _q, audit: _a, ...shared} = evaluationFlags;

export default class PlanExport extends AutoctxCommand {
  static override summary = 'Bind the plan for external evaluation and write its open work units as JSON Lines.';
  static override description =
    'Every line holds what an evaluator request holds for both arms (fixture, seed, lane, plan digest, pair key, arm order, initial state and observation). Run them with any engine and bring the results back with autoctx trials ingest.';
  static override examples = ['<%= config.bin %> plan export bb5f26ed --engine k8s-eval:v3 --fixtures fixtures.jsonl --out units.jsonl'];
  static override args = candidateArg;
  static override flags = {
    ...shared,
    engine: Flags.string({summary: 'A label naming the engine that will evaluate; bound into the plan as the evaluator identity.', required: true, helpValue: 'LABEL'}),
    out: Flags.string({summary: 'Where to write the JSON Lines (- for stdout, then without --json).', required: true, helpValue: 'FILE'}),
  };

  async run() {
    const {args, flags} = await this.parse(PlanExport);
    if (flags.out === '-' && this.jsonEnabled()) throw new AutoctxError('USAGE', '--out - writes the units to stdout, which --json needs for the result; write them to a file');
    const options = evaluationOptions(args.candidate, 'confirm', {...flags, evaluator: flags.engine, quiet: true});
    const result = await exportPlan(options);
    const text = result.lines.length ? `${result.lines.join('\n')}\n` : '';
    if (flags.out === '-') process.stdout.write(text);
    else writeFileSync(flags.out, text);
    const {lines: _lines, ...summary} = result;
    if (flags.out === '-') return summary;
    return this.done(summary, () => [`exported ${result.units} open units of plan ${result.plan_digest.slice(0, 12)} to ${flags.out}`]);
  }
}
