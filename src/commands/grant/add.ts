import * as Args from '@oclif/core/args';
import {SigningWritingCommand} from '../../cli/base-command.js';
import {grantAdd} from '../../core/delivery/curation.js';

export default class GrantAdd extends SigningWritingCommand {
  static override summary =
    'Grant another scenario read access to this one, so that its references to this scenario take part.';
  static override examples = ['<%= config.bin %> grant add billing --scenario support'];
  static override args = {name: Args.string({description: 'The other scenario.', required: true})};

  async run() {
    const {args, flags} = await this.parse(GrantAdd);
    const result = await grantAdd({
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
