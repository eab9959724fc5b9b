import * as Args from '@oclif/core/args';
import {SigningWritingCommand} from '../../cli/base-command.js';
import {grantRm} from '../../core/delivery/curation.js';

export default class GrantRm extends SigningWritingCommand {
  static override summary = 'Withdraw a grant.';
  static override examples = ['<%= config.bin %> grant rm billing --scenario support'];
  static override args = {name: Args.string({description: 'The other scenario.', required: true})};

  async run() {
    const {args, flags} = await this.parse(GrantRm);
    const result = await grantRm({
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
