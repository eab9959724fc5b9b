import * as Args from '@oclif/core/args';
import {ScenarioCommand} from '../../cli/base-command.js';
import {prettyJson} from '../../canonical/index.js';
import {handoffShow} from '../../core/delivery/curation.js';

export default class HandoffShow extends ScenarioCommand {
  static override summary = 'Show one exact handoff revision, ID@N.';
  static override examples = [
    '<%= config.bin %> handoff show release-notes@2',
    '<%= config.bin %> handoff show release-notes@1 --json | jq .handoff.content',
  ];
  static override args = {ref: Args.string({description: 'The handoff and its revision, as ID@N.', required: true})};

  async run() {
    const {args, flags} = await this.parse(HandoffShow);
    const result = handoffShow({knowledge: flags.knowledge, scenario: flags.scenario, ref: args.ref});
    const h = result.handoff;
    return this.done(result, () => [
      `${h.id}@${h.revision} of ${result.latest_revision}, written ${h.written_at}, content ${h.content_digest}`,
      prettyJson(h.content).trimEnd(),
    ]);
  }
}
