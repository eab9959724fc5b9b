import * as Flags from '@oclif/core/flags';
import {SigningWritingCommand} from '../../cli/base-command.js';
import {sourceFlag} from '../../cli/flags.js';
import {handoffWrite} from '../../core/delivery/curation.js';

export default class HandoffWrite extends SigningWritingCommand {
  static override summary =
    'Write the next revision of a handoff from a JSON object (revisions 1, 2, 3 …, each immutable).';
  static override description =
    'A package uses a handoff only when the request names it exactly, ID@N (bootstrap render --handoff ' +
    'ID@N), never "the latest".';
  static override examples = ['<%= config.bin %> handoff write --id release-notes --from handoff.json'];
  static override flags = {
    id: Flags.string({summary: 'The handoff id: 1 to 120 of A-Z a-z 0-9 . _ -', required: true, helpValue: 'ID'}),
    from: sourceFlag('from', {summary: 'A file holding one JSON object, or - for stdin.', required: true, stdin: true}),
  };

  async run() {
    const {flags} = await this.parse(HandoffWrite);
    const result = await handoffWrite({
      knowledge: flags.knowledge,
      signingKey: flags['signing-key'],
      scenario: flags.scenario,
      id: flags.id,
      from: flags.from,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `${result.status === 'written' ? 'wrote' : 'unchanged:'} ${result.id}@${result.revision} (content ` +
        `${result.content_digest.slice(0, 12)})`,
    ]);
  }
}
