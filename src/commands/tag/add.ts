import * as Args from '@oclif/core/args';
import {SigningWritingCommand} from '../../cli/base-command.js';
import {short} from '../../cli/style.js';
import {tagAdd} from '../../core/delivery/curation.js';

export default class TagAdd extends SigningWritingCommand {
  static override summary =
    'Tag a component bootstrap-context by its exact digest (at most 32 per scenario, kept in the order added).';
  static override description =
    "The component must be in some stored bundle of the scenario, so that a canary's components can be " +
    'tagged; the bundle that serves a session decides which tags apply. A new revision of a component ' +
    'has a new digest and is not tagged until someone tags it.';
  static override examples = [
    '<%= config.bin %> tag add 3f1c…(64 hex) --scenario demo',
    "<%= config.bin %> bundle show <active> --json | jq -r '.manifest.components[0].digest' | xargs <%= " +
      'config.bin %> tag add',
  ];
  static override args = {
    digest: Args.string({description: 'The component digest, all 64 hex characters.', required: true}),
  };

  async run() {
    const {args, flags} = await this.parse(TagAdd);
    const result = await tagAdd({
      knowledge: flags.knowledge,
      signingKey: flags['signing-key'],
      scenario: flags.scenario,
      digest: args.digest,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `${result.status === 'tagged' ? 'tagged' : 'already tagged'} ${result.tag.kind}/${result.tag.key} ` +
        `${short(result.tag.component_digest)} (${result.tags} of 32)`,
    ]);
  }
}
