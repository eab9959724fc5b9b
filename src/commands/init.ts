import {init} from '../core/common/init.js';
import {WritingCommand} from '../cli/base-command.js';
import {sourceFlag, textFlag} from '../cli/flags.js';
import {paint, short} from '../cli/style.js';

export default class Init extends WritingCommand {
  static override summary = 'Create a scenario with its baseline bundle as the active one.';
  static override description =
    'Builds the baseline bundle from SRC (a folder of <kind>/<key>.<ext> files, a manifest-shaped JSON ' +
    'file, or - for JSON on stdin), writes it, its record and active.json, a .gitignore for lock and ' +
    'temp files, and a .gitattributes (no line-ending conversion, no silent merge of mutable documents). ' +
    'Running it again with the same material changes nothing.';
  static override examples = [
    '<%= config.bin %> init --scenario support --from ./context/baseline',
    '<%= config.bin %> init --scenario support --from baseline.json --knowledge ./knowledge --json',
  ];
  static override flags = {
    scenario: textFlag('scenario', {
      char: 's',
      summary: 'Name of the new scenario ([A-Za-z0-9._-]).',
      required: true,
      helpValue: 'S',
    }),
    from: sourceFlag('from', {
      summary: 'Bundle source: a component folder, a manifest JSON file, or - for stdin.',
      required: true,
      stdin: true,
    }),
    'evaluator-epoch': textFlag('evaluator-epoch', {
      summary: 'Evaluator epoch label for a folder source (default epoch-1).',
      helpValue: 'E',
    }),
  };

  async run() {
    const {flags} = await this.parse(Init);
    const result = await init({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      from: flags.from,
      evaluatorEpoch: flags['evaluator-epoch'],
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      result.created
        ? `${paint.green('initialized')} ${result.scenario}: baseline ${short(result.bundle_digest)} is ` +
          `active (epoch ${result.evaluator_epoch})`
        : `${result.scenario} is already initialized with this baseline (${short(result.bundle_digest)}); ` +
          `nothing changed`,
    ]);
  }
}
