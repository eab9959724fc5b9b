import * as Args from '@oclif/core/args';
import {SigningWritingCommand} from '../../cli/base-command.js';
import {referenceAdd} from '../../core/delivery/curation.js';

export default class ReferenceAdd extends SigningWritingCommand {
  static override summary =
    "Refer to another scenario: its tagged components and text join this one's packages and recalls when " +
    'it grants read access (autoctx grant add). The first eight references are considered, in declared ' +
    'order.';
  static override examples = ['<%= config.bin %> reference add billing --scenario support'];
  static override args = {name: Args.string({description: 'The other scenario.', required: true})};

  async run() {
    const {args, flags} = await this.parse(ReferenceAdd);
    const result = await referenceAdd({
      knowledge: flags.knowledge,
      signingKey: flags['signing-key'],
      scenario: flags.scenario,
      name: args.name,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `updated: ${result.scenario} refers to [${result.references.join(', ')}], grants [${result.grants.join(', ')}]`,
    ]);
  }
}
