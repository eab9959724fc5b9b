import {ScenarioCommand} from '../../cli/base-command.js';
import {scopeFlag} from '../../cli/release-flags.js';
import {short} from '../../cli/style.js';
import {rollbackList} from '../../core/rollback/rollback-records.js';

export default class RollbackList extends ScenarioCommand {
  static override summary = 'List the rollback executions, oldest first, with the status each reads as now.';
  static override examples = [
    '<%= config.bin %> rollback list',
    '<%= config.bin %> rollback list --json | jq \'.executions[] | select(.status=="AWAITING_APPROVAL")\'',
  ];
  static override flags = {scope: scopeFlag};

  async run() {
    const {flags} = await this.parse(RollbackList);
    const result = rollbackList({knowledge: flags.knowledge, scenario: flags.scenario, scope: flags.scope});
    return this.done(result, () =>
      result.executions.length === 0
        ? ['no rollback executions']
        : result.executions.map(
            (v) =>
              `${v.execution_key}  ${v.status.padEnd(18)} ${v.scope.padEnd(8)} ` +
              `${v.from_version ?? (v.from_digest ? short(v.from_digest) : '-')} -> ` +
              `${v.to_version ?? (v.to_digest ? short(v.to_digest) : '-')}  by ` +
              `${v.actor}${v.approved_by ? `, approved by ${v.approved_by}` : ''}`,
          ),
    );
  }
}
