import * as Flags from '@oclif/core/flags';
import {ScenarioCommand} from '../cli/base-command.js';
import {integerFlag} from '../cli/flags.js';
import {packageSummary} from '../cli/bootstrap-view.js';
import {recall} from '../core/delivery/recall.js';

export default class Recall extends ScenarioCommand {
  static override summary =
    'Query-time recall: the components of the serving bundles (and granted references) that best match a ' +
    'query, framed and cited like the bootstrap package.';
  static override description =
    'Ranked by full-text search (MiniSearch), ties broken by scenario, kind and key; sufficient when at ' +
    'least one component scores at least the minimum score (1). Given the injected receipt of this ' +
    "scenario's bootstrap package, the exact components it delivered whole are left out first; any other " +
    'receipt is ignored.';
  static override examples = [
    '<%= config.bin %> recall --query "sync conflict on a shared folder"',
    '<%= config.bin %> recall --query "quota" --receipt bcr_0123456789abcdef0123456789abcdef --json',
  ];
  static override flags = {
    query: Flags.string({char: 'q', summary: 'The query text.', required: true, helpValue: 'Q'}),
    receipt: Flags.string({
      summary: 'A bootstrap receipt id: what it delivered whole is not recalled again.',
      helpValue: 'R',
    }),
    user: Flags.string({
      summary: 'The user the session is for (routing picks the bundle recalled from).',
      helpValue: 'U',
    }),
    session: Flags.string({summary: "The session id (routing's requester when no user is given).", helpValue: 'ID'}),
    'max-bytes': integerFlag('max-bytes', {
      summary: "The answer's byte limit (UTF-8), 512 to 8192.",
      min: 512,
      max: 8192,
      default: 4096,
      helpValue: 'N',
    }),
  };

  async run() {
    const {flags} = await this.parse(Recall);
    const result = recall({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      query: flags.query,
      receipt: flags.receipt,
      maxBytes: flags['max-bytes'],
      user: flags.user,
      session: flags.session,
    });
    return this.done(result, () => [
      ...packageSummary(result),
      ...(result.deduplicated > 0 ? [`(${result.deduplicated} already delivered at session start, left out)`] : []),
    ]);
  }
}
