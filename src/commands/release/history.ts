import * as Flags from '@oclif/core/flags';
import {ScenarioCommand} from '../../cli/base-command.js';
import {scopeFlag} from '../../cli/release-flags.js';
import {paint, short} from '../../cli/style.js';
import {releaseHistory} from '../../core/release/release-query.js';

export default class ReleaseHistory extends ScenarioCommand {
  static override summary = 'List the transition receipts, applied and blocked, in order.';
  static override examples = [
    '<%= config.bin %> release history',
    '<%= config.bin %> release history --version v21 --json',
  ];
  static override flags = {
    scope: scopeFlag,
    version: Flags.string({summary: "Only this release's receipts.", helpValue: 'V'}),
  };

  async run() {
    const {flags} = await this.parse(ReleaseHistory);
    const result = releaseHistory({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      scope: flags.scope,
      version: flags.version,
    });
    return this.done(result, () =>
      result.receipts.length === 0
        ? ['no transitions yet']
        : result.receipts.map((r) => {
            const what =
              r.action === 'runnable'
                ? `runnable set ${r.registry?.runnable.versions?.join(', ') ?? 'all'}`
                : `${r.version} ${r.from_state} -> ` +
                  `${r.target_state}${r.requested_state !== r.target_state ? ` (as ${r.requested_state})` : ''}`;
            const outcome = r.applied
              ? paint.green('applied')
              : `${paint.red('blocked')} ${r.blockers.map((b) => b.code).join(', ')}`;
            return (
              `${r.scope} #${r.seq}  ${r.at}  ${r.actor}  ${what}  ` +
              `${outcome}${r.deprecated_versions.length ? `  deprecated ${r.deprecated_versions.join(', ')}` : ''}` +
              `  registry ${short(r.registry_after)}  "${r.rationale}"`
            );
          }),
    );
  }
}
