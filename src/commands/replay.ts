import {replay, type ReplayResult} from '../core/evaluation/replay.js';
import {verdictLine} from '../model/promotion/guardrails.js';
import {ScenarioCommand} from '../cli/base-command.js';
import {digestArg} from '../cli/flags.js';
import {paint, short} from '../cli/style.js';

/** The promotion guardrails' replay: one line, then each recorded verdict and, where it differs, the replayed one. */
function guardrailLines(g: ReplayResult['guardrails']): string[] {
  if (!g) return [];
  const head =
    g.status === 'ok'
      ? paint.green('promotion guardrails replay bit for bit')
      : g.status === 'mismatch'
        ? paint.red('promotion guardrails do not replay')
        : paint.yellow('promotion guardrails not replayed: trial_observations.json is not there');
  return [
    head,
    ...g.recorded.guardrails.flatMap((v, i) => {
      const again = g.replayed?.guardrails[i];
      const same = !again || verdictLine(again) === verdictLine(v);
      return [`  ${same ? '=' : '≠'} ${verdictLine(v)}`, ...(same ? [] : [`    replayed: ${verdictLine(again)}`])];
    }),
  ];
}

export default class Replay extends ScenarioCommand {
  static override summary = 'Recompute a decision from the persisted evidence and compare it with the record.';
  static override description =
    'Exact on decision, reason, counts and mean; the confidence bounds exactly or, for records written ' +
    'by another runtime, within 16 ULP or 1e-12 of the half-width. Reports bit_exact and the largest ' +
    "distance; and a promotion's guardrail verdicts, bit for bit. Exit 8 on a mismatch.";
  static override examples = [
    '<%= config.bin %> replay bb5f26ed',
    '<%= config.bin %> replay 6d9bc734 --json | jq .bit_exact',
  ];
  static override args = {candidate: digestArg('the candidate', 'Candidate bundle digest or a unique prefix.')};

  async run() {
    const {args, flags} = await this.parse(Replay);
    const r = replay({knowledge: flags.knowledge, scenario: flags.scenario, candidate: args.candidate});
    return this.done(r, () => [
      (r.status === 'ok'
        ? paint.green(r.bit_exact ? 'replays bit for bit' : 'replays within tolerance')
        : paint.red('does not replay')) + `: ${short(r.bundle_digest)} (largest distance ${r.max_ulp} ULP)`,
      ...r.fields.map(
        (f) =>
          `  ${f.exact ? '=' : '≠'} ${f.field}: recorded ${JSON.stringify(f.recorded)}, replayed ` +
          `${JSON.stringify(f.replayed)}${f.ulp !== undefined ? ` (${f.ulp} ULP)` : ''}`,
      ),
      ...guardrailLines(r.guardrails),
    ]);
  }
}
