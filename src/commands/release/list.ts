import {ScenarioCommand} from '../../cli/base-command.js';
import {scopeFlag} from '../../cli/release-flags.js';
import {short} from '../../cli/style.js';
import {releaseList} from '../../core/release/release-query.js';
import {scopeLines} from '../../cli/output/release-output.js';

export default class ReleaseList extends ScenarioCommand {
  static override summary = "List releases and their state in each scope, with each registry's digest.";
  static override examples = [
    '<%= config.bin %> release list',
    "<%= config.bin %> release list --scope eu --json | jq -r '.scopes[0].registry_digest'",
  ];
  static override flags = {scope: scopeFlag};

  async run() {
    const {flags} = await this.parse(ReleaseList);
    const result = releaseList({knowledge: flags.knowledge, scenario: flags.scenario, scope: flags.scope});
    return this.done(result, () =>
      result.scopes.every((s) => s.releases.length === 0)
        ? ['no releases (autoctx release name VERSION DIGEST names one)']
        : result.scopes.flatMap((s) => scopeLines(s, short)),
    );
  }
}
