import {repair} from '../core/common/repair.js';
import {SigningWritingCommand} from '../cli/base-command.js';
import {paint} from '../cli/style.js';
import {actorFlag} from '../cli/release-flags.js';

export default class Repair extends SigningWritingCommand {
  static override summary = 'Complete or remove what an interrupted run left behind.';
  static override description =
    'Brings lifecycles and mirrors in line with active.json, restores missing copies of negative ' +
    'results, removes temporary files and dead lock folders, and rewrites legacy evidence as schema 2 ' +
    'once its replay reproduces the record. Lists what it cannot complete safely.';
  static override examples = ['<%= config.bin %> repair', '<%= config.bin %> verify || <%= config.bin %> repair'];
  static override flags = {actor: actorFlag};

  async run() {
    const {flags} = await this.parse(Repair);
    const r = await repair({
      knowledge: flags.knowledge,
      signingKey: flags['signing-key'],
      actor: flags.actor,
      scenario: flags.scenario,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(r, () => [
      ...r.actions.map((a) => `${paint.green('repaired')} ${a}`),
      ...r.remaining.map((a) => `${paint.yellow('left')} ${a}`),
      r.actions.length || r.remaining.length
        ? `${r.actions.length} repaired, ${r.remaining.length} left`
        : 'nothing to repair',
    ]);
  }
}
