import * as Args from '@oclif/core/args';
import {ScenarioCommand} from '../../cli/base-command.js';
import {paint, short} from '../../cli/style.js';
import {rollbackShow} from '../../core/rollback/rollback-records.js';

export default class RollbackShow extends ScenarioCommand {
  static override summary =
    'Show one rollback execution: its status (derived when read), conditions, actor, time and approval.';
  static override examples = [
    '<%= config.bin %> rollback show RBX-20261202031500-1a2b3c4d',
    '<%= config.bin %> rollback show RBX-20261202031500-1a2b3c4d --json | jq .view.status',
  ];
  static override args = {key: Args.string({description: 'The execution key (RBX-…).', required: true})};

  async run() {
    const {args, flags} = await this.parse(RollbackShow);
    const result = rollbackShow({knowledge: flags.knowledge, scenario: flags.scenario, key: args.key});
    const r = result.execution;
    const v = result.view;
    return this.done(result, () => [
      `${r.execution_key}  ${v.status}${r.emergency ? ' (emergency)' : ''}  scope ${r.scope}`,
      `  ${r.from_version ?? (r.from_digest ? short(r.from_digest) : '-')} -> ` +
        `${r.to_version ?? (r.to_digest ? short(r.to_digest) : '-')}` +
        `${r.requested_target ? ` (asked: --to ${r.requested_target})` : ''}`,
      `  by ${r.actor} at ${r.executed_at}: ${r.rationale || '(blank rationale)'}`,
      ...r.conditions.map((c) => `  ${c.passed ? paint.green('ok  ') : paint.red('FAIL')} ${c.code}: ${c.detail}`),
      ...(result.approval
        ? [`  approved by ${result.approval.approved_by} at ${result.approval.approved_at}`]
        : v.approval_deadline
          ? [`  approval window closes ${v.approval_deadline}`]
          : []),
    ]);
  }
}
