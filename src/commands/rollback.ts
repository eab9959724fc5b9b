import {rollback} from '../core/rollback.js';
import {WritingCommand} from '../cli/base-command.js';
import {digestFlag, textFlag} from '../cli/flags.js';
import {paint, short} from '../cli/style.js';

export default class Rollback extends WritingCommand {
  static override summary = 'Move the active pointer back to its recorded rollback target.';
  static override description =
    'A compare-and-swap: with --expect-active D the move happens only if D is active, and a re-run after a completed rollback from D reports it instead of moving again. A second rollback undoes the first.';
  static override examples = [
    '<%= config.bin %> rollback --rationale "regression in production"',
    '<%= config.bin %> rollback --rationale "bad deploy" --expect-active 6d9bc734 --json',
  ];
  static override flags = {
    rationale: textFlag('rationale', {summary: 'Why the rollback is needed (recorded).', required: true}),
    'expect-active': digestFlag('expect-active', {summary: 'Only roll back if this bundle is active.'}),
  };

  async run() {
    const {flags} = await this.parse(Rollback);
    const result = await rollback({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      rationale: flags.rationale,
      expectActive: flags['expect-active'],
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `${result.already_done ? 'already rolled back' : paint.green('rolled back')} ${result.scenario}: ${short(result.from_digest)} -> ${short(result.bundle_digest)} (rollback ${result.rollback_id})`,
    ]);
  }
}
