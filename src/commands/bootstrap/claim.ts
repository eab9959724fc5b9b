import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import {WritingCommand} from '../../cli/base-command.js';
import {claim} from '../../core/delivery/bootstrap.js';

export default class BootstrapClaim extends WritingCommand {
  static override summary = 'Claim a pending delivery receipt once: injected (before showing the package) or failed.';
  static override description =
    'A second injected claim is refused with RECEIPT_ALREADY_CLAIMED (exit 6), even when the receipt is ' +
    'already injected; an unknown receipt is exit 2.';
  static override examples = [
    '<%= config.bin %> bootstrap claim bcr_0123456789abcdef0123456789abcdef --outcome injected',
  ];
  static override args = {
    receipt: Args.string({description: 'The receipt id from bootstrap prepare.', required: true}),
  };
  static override flags = {
    outcome: Flags.string({summary: 'What became of the package.', required: true, options: ['injected', 'failed']}),
  };

  async run() {
    const {args, flags} = await this.parse(BootstrapClaim);
    const result = await claim({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      receipt: args.receipt,
      outcome: flags.outcome,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `${result.status === 'claimed' ? 'claimed' : 'unchanged:'} ${result.receipt_id} ${result.state}`,
    ]);
  }
}
