import * as Args from '@oclif/core/args';
import {SigningWritingCommand} from '../../cli/base-command.js';
import {referenceRm} from '../../core/delivery/curation.js';

export default class ReferenceRm extends SigningWritingCommand {
  static override summary = 'Remove a context reference.';
  static override examples = ['<%= config.bin %> reference rm billing --scenario support'];
  static override args = {name: Args.string({description: 'The other scenario.', required: true})};

  async run() {
    const {args, flags} = await this.parse(ReferenceRm);
    const result = await referenceRm({
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
