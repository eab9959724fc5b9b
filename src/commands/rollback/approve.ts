import * as Args from '@oclif/core/args';
import {WritingCommand} from '../../cli/base-command.js';
import {actorFlag, allowedSignersFlag, signingKeyFlag} from '../../cli/release-flags.js';
import {paint} from '../../cli/style.js';
import {rollbackApprove} from '../../core/rollback/rollback-records.js';

export default class RollbackApprove extends WritingCommand {
  static override summary = 'Approve an emergency rollback as its second, different approver.';
  static override description =
    'The approval is written once, under the scenario lock, and bound to the SHA-256 of the execution ' +
    "record's exact bytes. Refused (exit 3, nothing written): the executor approving, a second approval, " +
    'a rollback that awaits none, and an approval after the window (rollback.approval_window_days in ' +
    'autoctx.config.json, default 7).';
  static override examples = ['<%= config.bin %> rollback approve RBX-20261202031500-1a2b3c4d --actor bob@example.com'];
  static override args = {key: Args.string({description: 'The execution key (RBX-…).', required: true})};
  static override flags = {actor: actorFlag, 'signing-key': signingKeyFlag, 'allowed-signers': allowedSignersFlag};

  async run() {
    const {args, flags} = await this.parse(RollbackApprove);
    const result = await rollbackApprove({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      key: args.key,
      actor: flags.actor,
      lockTimeout: flags['lock-timeout'],
      signingKey: flags['signing-key'],
      allowedSigners: flags['allowed-signers'],
    });
    return this.done(result, () => [
      `${paint.green('approved')} ${result.execution_key} by ${result.approved_by} at ${result.approved_at}`,
    ]);
  }
}
