import * as Flags from '@oclif/core/flags';
import {WritingCommand} from '../../cli/base-command.js';
import {fail} from '../../errors.js';
import {evidencePrune} from '../../core/inspection/evidence.js';

export default class EvidencePrune extends WritingCommand {
  static override summary =
    'Remove the evidence packages past their retention: 90 days, 30 when the latest inspection was PASS.';
  static override examples = [
    '<%= config.bin %> evidence prune',
    '<%= config.bin %> evidence prune --now 2027-03-01T00:00:00Z --json',
  ];
  static override flags = {
    now: Flags.string({summary: 'Judge by this time instead of the clock (ISO 8601).', helpValue: 'TIME'}),
  };

  async run() {
    const {flags} = await this.parse(EvidencePrune);
    const at = flags.now === undefined ? undefined : Date.parse(flags.now);
    if (at !== undefined && !Number.isFinite(at))
      fail('USAGE', `--now must be an ISO 8601 time, not ${JSON.stringify(flags.now)}`);
    const result = await evidencePrune({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      lockTimeout: flags['lock-timeout'],
      ...(at !== undefined ? {now: () => new Date(at)} : {}),
    });
    return this.done(result, () => [
      `removed ${result.removed.length} package(s) of ${result.scenario}, kept ${result.kept}`,
      ...result.removed.map((id) => `  ${id}`),
    ]);
  }
}
