import {Flags} from '@oclif/core';
import {rollback} from '../core/rollback.js';
import {AutoctxCommand, lockFlags, parseLockTimeout, storeFlags} from '../cli/base-command.js';
import {paint, short} from '../cli/style.js';

export default class Rollback extends AutoctxCommand {
  static override summary = 'Move the active pointer back to its recorded rollback target.';
  static override description =
    'A compare-and-swap: with --expect-active D the move happens only if D is active, and a re-run after a completed rollback from D reports it instead of moving again. A second rollback undoes the first.';
  static override examples = [
    '<%= config.bin %> rollback --rationale "regression in production"',
    '<%= config.bin %> rollback --rationale "bad deploy" --expect-active 6d9bc734 --json',
  ];
  static override flags = {
    ...storeFlags,
    rationale: Flags.string({summary: 'Why the rollback is needed (recorded).', required: true, helpValue: 'TEXT'}),
    'expect-active': Flags.string({summary: 'Only roll back if this bundle is active.', helpValue: 'DIGEST'}),
    ...lockFlags,
  };

  async run() {
    const {flags} = await this.parse(Rollback);
    const result = await rollback({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      rationale: flags.rationale,
      expectActive: flags['expect-active'],
      lockTimeout: parseLockTimeout(flags['lock-timeout']),
    });
    return this.done(result, () => [
      `${result.already_done ? 'already rolled back' : paint.green('rolled back')} ${result.scenario}: ${short(result.from_digest)} -> ${short(result.bundle_digest)} (rollback ${result.rollback_id})`,
    ]);
  }
}
