import * as Flags from '@oclif/core/flags';
import {ScenarioCommand} from '../../cli/base-command.js';
import {integerFlag} from '../../cli/flags.js';
import {render} from '../../core/delivery/bootstrap.js';
import {packageSummary} from '../../cli/bootstrap-view.js';

export default class BootstrapRender extends ScenarioCommand {
  static override summary = 'Render the bootstrap package of a scenario as it stands: pure, writes nothing.';
  static override description =
    'The package holds the exact handoff named (if any), then up to six tagged components of the serving ' +
    'bundles of the scenario and of the references that grant it read access, quoted as untrusted ' +
    'history and cited to exact digests, within --max-bytes. The package text goes to stdout; with ' +
    '--json, the whole answer.';
  static override examples = [
    '<%= config.bin %> bootstrap render',
    '<%= config.bin %> bootstrap render --handoff release-notes@1 --max-bytes 2048',
  ];
  static override flags = {
    handoff: Flags.string({summary: 'An exact handoff revision to put first, ID@N.', helpValue: 'ID@N'}),
    user: Flags.string({
      summary: "The user the session is for (routing: a canary member gets the canary's curated context).",
      helpValue: 'U',
    }),
    session: Flags.string({summary: "The session id (routing's requester when no user is given).", helpValue: 'ID'}),
    'max-bytes': integerFlag('max-bytes', {
      summary: "The package's byte limit (UTF-8), 512 to 8192.",
      min: 512,
      max: 8192,
      default: 4096,
      helpValue: 'N',
    }),
  };

  async run() {
    const {flags} = await this.parse(BootstrapRender);
    const result = render({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      handoff: flags.handoff,
      maxBytes: flags['max-bytes'],
      user: flags.user,
      session: flags.session,
    });
    return this.done(result, () => packageSummary(result));
  }
}
