import {rolloverEpoch} from '../../core/rollback/epoch.js';
import {WritingCommand} from '../../cli/base-command.js';
import {textFlag} from '../../cli/flags.js';
import {paint, short} from '../../cli/style.js';
import {allowedSignersFlag, signingKeyFlag} from '../../cli/release-flags.js';

export default class EpochRollover extends WritingCommand {
  static override summary = 'Re-anchor the active context under a new evaluator epoch.';
  static override description =
    'A new parentless bundle with the same components becomes active; the old one is superseded. To the ' +
    'current epoch nothing changes.';
  static override examples = ['<%= config.bin %> epoch rollover --evaluator-epoch epoch-2'];
  static override flags = {
    'evaluator-epoch': textFlag('evaluator-epoch', {
      summary: 'The new evaluator epoch.',
      required: true,
      helpValue: 'E',
    }),
    'signing-key': signingKeyFlag,
    'allowed-signers': allowedSignersFlag,
  };

  async run() {
    const {flags} = await this.parse(EpochRollover);
    const result = await rolloverEpoch({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      evaluatorEpoch: flags['evaluator-epoch'],
      signingKey: flags['signing-key'],
      allowedSigners: flags['allowed-signers'],
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      result.status === 'unchanged'
        ? `${result.scenario} is already at epoch ${result.evaluator_epoch}; nothing changed`
        : `${paint.green('rolled over')} ${result.scenario} to epoch ${result.evaluator_epoch}: ` +
          `${short(result.previous_digest)} -> ${short(result.bundle_digest)}`,
    ]);
  }
}
