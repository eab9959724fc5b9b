import * as Args from '@oclif/core/args';
import {SigningWritingCommand} from '../../cli/base-command.js';
import {short} from '../../cli/style.js';
import {tagRm} from '../../core/delivery/curation.js';

export default class TagRm extends SigningWritingCommand {
  static override summary = 'Remove a bootstrap-context tag.';
  static override examples = ['<%= config.bin %> tag rm 3f1c…(64 hex)'];
  static override args = {
    digest: Args.string({description: 'The tagged component digest, all 64 hex characters.', required: true}),
  };

  async run() {
    const {args, flags} = await this.parse(TagRm);
    const result = await tagRm({
      knowledge: flags.knowledge,
      signingKey: flags['signing-key'],
      scenario: flags.scenario,
      digest: args.digest,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `untagged ${result.tag.kind}/${result.tag.key} ${short(result.tag.component_digest)} (${result.tags} left)`,
    ]);
  }
}
