import {Flags} from '@oclif/core';
import {calibrate} from '../core/evaluation/calibrate.js';
import {
  DISCRETE_TIE_RATE,
  SCREEN_SIZES,
  screenRows,
  sizingRows,
  type ScreenRow,
  type SizingRow,
} from '../core/evaluation/calibrate-screen.js';
import {NEW_PLAN_CONFIRMATION_POLICY} from '../model/evaluation/policy.js';
import {AutoctxCommand} from '../cli/base-command.js';
import {integerFlag} from '../cli/flags.js';

const TABLES = ['all', 'campaign', 'screen', 'sizing'] as const;

function campaignLines(result: ReturnType<typeof calibrate>): string[] {
  const w = Math.max(...result.rows.map((r) => r.case.length));
  return [
    `${'case'.padEnd(w)}  ${'method'.padEnd(17)}  promotion  candidates  conf. blocks  seconds`,
    ...result.rows.map(
      (r) =>
        `${r.case.padEnd(w)}  ${r.method.padEnd(17)}  ${r.promotion_rate.toFixed(3).padStart(9)}  ` +
        `${r.avg_candidates.toFixed(3).padStart(10)}  ` +
        `${r.avg_confirmation_blocks.toFixed(3).padStart(12)}  ${r.seconds.toFixed(2).padStart(7)}`,
    ),
    `${result.campaigns} campaigns per row, seed ${result.seed}, familywise alpha 0.05, decay 0.5, at ` +
      `most 8 candidates per campaign`,
  ];
}

const effect = (x: number) => `${x > 0 ? '+' : ''}${x.toFixed(2)} SD`;

function screenLines(rows: readonly ScreenRow[], reps: number): string[] {
  const groups = [...new Set(rows.map((r) => `${r.scores}|${r.effect_sd}`))];
  return [
    'screen: share of candidates passing the screen (pairs per candidate until a decision), by screen size',
    `${'scores'.padEnd(11)}  ${'true effect'.padEnd(11)}  ` +
      SCREEN_SIZES.map((n) => `${n} pairs`.padEnd(13)).join('  '),
    ...groups.map((g) => {
      const of = rows.filter((r) => `${r.scores}|${r.effect_sd}` === g);
      const cells = of.map((r) => `${r.pass_rate.toFixed(3)} (${r.avg_pairs.toFixed(1)})`.padEnd(13));
      return `${of[0]!.scores.padEnd(11)}  ${effect(of[0]!.effect_sd).padEnd(11)}  ${cells.join('  ')}`;
    }),
    `${reps} candidates per cell; discrete scores tie on ${DISCRETE_TIE_RATE * 100}% of pairs; the rest of the ` +
      `policy is the default (confirmation ${NEW_PLAN_CONFIRMATION_POLICY.min_confirmation_pairs}–` +
      `${NEW_PLAN_CONFIRMATION_POLICY.max_confirmation_pairs}, held-out ` +
      `${NEW_PLAN_CONFIRMATION_POLICY.min_heldout_pairs}, ` +
      `z ${NEW_PLAN_CONFIRMATION_POLICY.confidence_z}); new plans screen ` +
      `${NEW_PLAN_CONFIRMATION_POLICY.min_screen_pairs} pairs`,
  ];
}

function sizingLines(rows: readonly SizingRow[], reps: number): string[] {
  return [
    'sizing: share of candidates confirmed, by true effect and confirmation budget (default policy otherwise)',
    `${'true effect'.padEnd(11)}  confirmation pairs (min–max)  fixtures needed  confirmed  pairs per candidate`,
    ...rows.map(
      (r) =>
        `${effect(r.effect_sd).padEnd(11)}  ` +
        `${`${r.min_confirmation_pairs}–${r.max_confirmation_pairs}`.padStart(28)}  ` +
        `${String(r.fixtures_needed).padStart(15)}  ${r.confirm_rate.toFixed(3).padStart(9)}  ` +
        `${r.avg_pairs.toFixed(1).padStart(19)}`,
    ),
    `${reps} candidates per row, continuous scores, one seed per fixture; effects in standard deviations of ` +
      `the per-pair difference`,
  ];
}

export default class Calibrate extends AutoctxCommand {
  static override summary = 'Simulate evaluations and print the calibration tables (campaign, screen, sizing).';
  static override description =
    "The campaign table: for each case (the reference table's seven rows, the betting method beside Hoeffding, " +
    'and a null case whose seeds share a fixture effect, blocked and naive), simulates campaigns of up to 8 ' +
    'candidates under the campaign policy and reports the promotion rate, candidates and confirmation ' +
    'blocks per campaign. The screen table: how often a candidate with a true effect of −0.5, +0.25 or +0.5 ' +
    'standard deviations passes screens of each size, with continuous scores and with discrete scores that ' +
    'tie. The sizing table: how often a candidate is confirmed for a given effect and confirmation budget, ' +
    'and the fixtures that needs. See docs/statistics.md and docs/choosing-a-policy.md.';
  static override examples = [
    '<%= config.bin %> calibrate',
    '<%= config.bin %> calibrate --table screen --reps 4000',
    '<%= config.bin %> calibrate --campaigns 200 --seed 7 --json',
  ];
  static override flags = {
    campaigns: integerFlag('campaigns', {summary: 'Campaigns per row.', default: 1000, min: 1, max: 1_000_000}),
    reps: integerFlag('reps', {
      summary: 'Candidates per cell of the screen and sizing tables.',
      default: 2000,
      min: 1,
      max: 1_000_000,
    }),
    table: Flags.string({summary: 'Which table to compute.', options: [...TABLES], default: 'all'}),
    seed: integerFlag('seed', {
      summary: 'Random seed; the same seed gives the same table.',
      default: 986,
      min: 0,
      max: 2 ** 32 - 1,
    }),
  };

  async run() {
    const {flags} = await this.parse(Calibrate);
    const table = flags.table as (typeof TABLES)[number];
    const want = (t: (typeof TABLES)[number]) => table === 'all' || table === t;
    const campaign = calibrate({
      campaigns: flags.campaigns,
      seed: flags.seed,
      ...(want('campaign') ? {} : {cases: []}),
    });
    const screen = want('screen') ? screenRows(flags.reps, flags.seed) : [];
    const sizing = want('sizing') ? sizingRows(flags.reps, flags.seed) : [];
    const result = {...campaign, reps: flags.reps, screen_rows: screen, sizing_rows: sizing};
    return this.done(result, () => [
      ...(want('campaign') ? campaignLines(campaign) : []),
      ...(want('screen') ? [...(table === 'all' ? [''] : []), ...screenLines(screen, flags.reps)] : []),
      ...(want('sizing') ? [...(table === 'all' ? [''] : []), ...sizingLines(sizing, flags.reps)] : []),
    ]);
  }
}
