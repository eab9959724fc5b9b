import {scopeLines} from '../cli/output/release-output.js';
import {status, type CandidateStatus} from '../core/common/status.js';
import {ScenarioCommand} from '../cli/base-command.js';
import {paint, short} from '../cli/style.js';
import {alignRows, candidateRows, fitWidth} from '../cli/output/status-table.js';
import {DIVERGED_WAY_OUT} from '../model/common/divergence-advice.js';
import {verdictLine} from '../model/promotion/guardrails.js';
import {armObservedLine} from '../core/evaluation/observed/summary.js';

const fmt = (x: number | null) => (x === null ? '-' : x.toFixed(4));
type ArmScores = NonNullable<CandidateStatus['arms']>;
const armFmt = (a: ArmScores['candidate']) =>
  `${fmt(a.mean)}${a.low === null ? '' : ` [${fmt(a.low)}, ${fmt(a.high)}]`}`;
/** Both arms' mean scores with their 95% intervals, on one line under the candidate's. */
const armScoresLine = (s: ArmScores) =>
  `scores: candidate ${armFmt(s.candidate)}, incumbent ${armFmt(s.incumbent)} (95% t-interval per arm)`;

export default class Status extends ScenarioCommand {
  static override summary =
    'Show the active bundle and each candidate: lifecycle, decision, mean and interval, rationale and when.';
  static override description =
    "One row per candidate under a header row; the rationale is the proposer's. On a terminal each row is cut to " +
    "the terminal's width (ending in …); piped, and with --json, the text is whole.";
  static override examples = ['<%= config.bin %> status', '<%= config.bin %> status --scenario support --json'];

  async run() {
    const {flags} = await this.parse(Status);
    const result = status({knowledge: flags.knowledge, scenario: flags.scenario});
    const width = process.stdout.isTTY ? process.stdout.columns : undefined;
    return this.done(result, () =>
      result.scenarios.length === 0
        ? ['no scenarios yet; run autoctx init --scenario S --from SRC']
        : result.scenarios.flatMap((s) => [
            `${paint.bold(s.scenario)}: ` +
              `${
                s.active
                  ? `active ${short(s.active.bundle_digest)} (epoch ${s.active.evaluator_epoch}, rollback target ` +
                    `${short(s.active.rollback_target_digest)})`
                  : paint.yellow('no active bundle')
              }`,
            ...(s.details.length > 0
              ? alignRows(candidateRows(s.details), '  ').flatMap((line, i) => {
                  if (i === 0) return [paint.bold(fitWidth(line, width))];
                  // Under each candidate's row, its arms' mean scores (once it has recorded pairs).
                  const arms = s.details[i - 1]?.arms;
                  const observed = s.details[i - 1]?.observed;
                  const guardrails = s.details[i - 1]?.guardrails ?? [];
                  return [
                    fitWidth(line, width),
                    ...(arms ? [fitWidth(`      ${armScoresLine(arms)}`, width)] : []),
                    // And what the evaluator observed of each arm (median, p90, mean; descriptive).
                    ...(observed
                      ? (['candidate', 'incumbent'] as const).map((arm) =>
                          fitWidth(`      ${arm}: ${armObservedLine(observed[arm])}`, width),
                        )
                      : []),
                    // And the plan's guardrails: recorded with the promotion, or what the gate would answer now.
                    ...guardrails.map((v) => fitWidth(`      guardrail ${verdictLine(v)}`, width)),
                  ];
                })
              : []),
            ...s.releases.flatMap((r) => scopeLines(r, short).map((l) => `  ${l}`)),
            ...(s.evidence.packages > 0
              ? [
                  `  evidence on this machine: ${s.evidence.packages} package(s), ` +
                    `${s.evidence.uninspected} uninspected` +
                    `${
                      Object.keys(s.evidence.verdicts).length
                        ? `; ${Object.entries(s.evidence.verdicts)
                            .map(([v, n]) => `${n} ${v}`)
                            .join(', ')}`
                        : ''
                    }`,
                ]
              : []),
            ...s.rollbacks.map((v) =>
              v.status === 'EXPIRED_UNAPPROVED'
                ? paint.red(
                    `  emergency rollback ${v.execution_key} by ${v.actor} (${v.scope}) was never ` +
                      `approved: its window closed ${v.approval_deadline}`,
                  )
                : paint.yellow(
                    `  emergency rollback ${v.execution_key} by ${v.actor} (${v.scope}) awaits a second ` +
                      `approver until ${v.approval_deadline}: autoctx rollback approve ${v.execution_key}`,
                  ),
            ),
            ...(s.diverged.length > 0
              ? [
                  paint.red(`  diverged (autoctx repair refuses): ${DIVERGED_WAY_OUT}`),
                  ...s.diverged.map((d) => `    ${d}`),
                ]
              : []),
            ...(s.repairable.length > 0
              ? [
                  paint.yellow(
                    `  an interrupted command left work to complete: run autoctx ` +
                      `repair${s.scenario ? ` --scenario ${JSON.stringify(s.scenario)}` : ''}`,
                  ),
                  ...s.repairable.map((r) => `    ${short(r.slice(0, 64))}${r.slice(64)}`),
                ]
              : []),
          ]),
    );
  }
}
