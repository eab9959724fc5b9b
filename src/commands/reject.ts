import {Args, Flags} from '@oclif/core';
import {reject} from '../core/reject.js';
import {AutoctxCommand, lockFlags, parseLockTimeout, storeFlags} from '../cli/base-command.js';
import {paint, short} from '../cli/style.js';

export default class Reject extends AutoctxCommand {
  static override summary = 'Abandon a candidate that is not serving (terminal, with a negative result).';
  static override examples = ['<%= config.bin %> reject aa7245e3 --rationale "superseded by a better idea"'];
  static override args = {candidate: Args.string({description: 'Candidate bundle digest or a unique prefix.', required: true})};
  static override flags = {...storeFlags, rationale: Flags.string({summary: 'Why it is abandoned (recorded).', required: true, helpValue: 'TEXT'}), ...lockFlags};

  async run() {
    const {args, flags} = await this.parse(Reject);
    const result = await reject({knowledge: flags.knowledge, scenario: flags.scenario, candidate: args.candidate, rationale: flags.rationale, lockTimeout: parseLockTimeout(flags['lock-timeout'])});
    return this.done(result, () => [`${result.already_rejected ? 'already rejected' : paint.red('rejected')} ${short(result.bundle_digest)}`]);
  }
}
