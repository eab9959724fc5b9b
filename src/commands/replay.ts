import {replay} from '../core/evaluation/replay.js';
import {ScenarioCommand} from '../cli/base-command.js';
import {digestArg} from '../cli/flags.js';
import {paint, short} from '../cli/style.js';

export default class Replay extends ScenarioCommand {
  static override summary = 'Recompute a decision from the persisted evidence and compare it with the record.';
  static override description =
    'Exact on decision, reason, counts and mean; the confidence bounds exactly or, for records written ' +
    'by another runtime, within 16 ULP or 1e-12 of the half-width. Reports bit_exact and the largest ' +
    'distance. Exit 8 on a mismatch.';
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
    ]);
  }
}
