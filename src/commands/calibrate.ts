import {calibrate} from '../core/evaluation/calibrate.js';
import {AutoctxCommand} from '../cli/base-command.js';
import {integerFlag} from '../cli/flags.js';

export default class Calibrate extends AutoctxCommand {
  static override summary = 'Simulate campaigns and print the false-promotion calibration table.';
  static override description =
    "For each case (the reference table's seven rows, the betting method beside Hoeffding, and a null " +
    'case whose seeds share a fixture effect, blocked and naive), simulates campaigns of up to 8 ' +
    'candidates under the campaign policy and reports the promotion rate, candidates and confirmation ' +
    'blocks per campaign. See docs/statistics.md.';
  static override examples = [
    '<%= config.bin %> calibrate',
    '<%= config.bin %> calibrate --campaigns 200 --seed 7 --json',
  ];
  static override flags = {
    campaigns: integerFlag('campaigns', {summary: 'Campaigns per row.', default: 1000, min: 1, max: 1_000_000}),
    seed: integerFlag('seed', {
      summary: 'Random seed; the same seed gives the same table.',
      default: 986,
      min: 0,
      max: 2 ** 32 - 1,
    }),
  };

  async run() {
    const {flags} = await this.parse(Calibrate);
    const result = calibrate({campaigns: flags.campaigns, seed: flags.seed});
    const w = Math.max(...result.rows.map((r) => r.case.length));
    return this.done(result, () => [
      `${'case'.padEnd(w)}  ${'method'.padEnd(17)}  promotion  candidates  conf. blocks  seconds`,
      ...result.rows.map(
        (r) =>
          `${r.case.padEnd(w)}  ${r.method.padEnd(17)}  ${r.promotion_rate.toFixed(3).padStart(9)}  ` +
          `${r.avg_candidates.toFixed(3).padStart(10)}  ` +
          `${r.avg_confirmation_blocks.toFixed(3).padStart(12)}  ${r.seconds.toFixed(2).padStart(7)}`,
      ),
      `${result.campaigns} campaigns per row, seed ${result.seed}, familywise alpha 0.05, decay 0.5, at ` +
        `most 8 candidates per campaign`,
    ]);
  }
}
