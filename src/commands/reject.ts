import {reject} from '../core/promotion/reject.js';
import {WritingCommand} from '../cli/base-command.js';
import {digestArg, textFlag} from '../cli/flags.js';
import {paint, short} from '../cli/style.js';
import {actorFlag, allowedSignersFlag, signingKeyFlag} from '../cli/release-flags.js';

export default class Reject extends WritingCommand {
  static override summary = 'Abandon a candidate that is not serving (terminal, with a negative result).';
  static override examples = ['<%= config.bin %> reject aa7245e3 --rationale "superseded by a better idea"'];
  static override args = {candidate: digestArg('the candidate', 'Candidate bundle digest or a unique prefix.')};
  static override flags = {
    rationale: textFlag('rationale', {summary: 'Why it is abandoned (recorded).', required: true}),
    'signing-key': signingKeyFlag,
    'allowed-signers': allowedSignersFlag,
    actor: actorFlag,
  };

  async run() {
    const {args, flags} = await this.parse(Reject);
    const result = await reject({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      candidate: args.candidate,
      rationale: flags.rationale,
      actor: flags.actor,
      signingKey: flags['signing-key'],
      allowedSigners: flags['allowed-signers'],
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `${result.already_rejected ? 'already rejected' : paint.red('rejected')} ${short(result.bundle_digest)}`,
    ]);
  }
}
