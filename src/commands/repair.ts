import {repair} from '../core/common/repair.js';
import {SigningWritingCommand} from '../cli/base-command.js';
import {paint} from '../cli/style.js';
import {actorFlag} from '../cli/release-flags.js';

export default class Repair extends SigningWritingCommand {
  static override summary = 'Complete or remove what an interrupted run left behind.';
  static override description =
    'Brings lifecycles and mirrors in line with active.json, restores missing copies of negative ' +
    'results, removes temporary files and dead lock folders, and rewrites legacy evidence as schema ' +
    '2 once its replay reproduces the record, and writes the root .gitattributes where a tree autoctx ' +
    'made lacks it or its block was edited. Lists what it cannot complete safely. It completes ' +
    "only what one clone's interrupted command left (verify's warnings): a tree where two clones' " +
    "histories were merged (verify's DIVERGED) is refused, exit 8, with nothing changed: keep one side " +
    "and make the other side's changes again on it. Read verify's findings (or autoctx status) before " +
    'repairing.';
  static override examples = [
    '<%= config.bin %> status',
    '<%= config.bin %> repair',
    '<%= config.bin %> repair --scenario demo',
  ];
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
