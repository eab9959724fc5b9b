import * as Flags from '@oclif/core/flags';
import {propose} from '../core/promotion/propose.js';
import {SigningWritingCommand} from '../cli/base-command.js';
import {integerFlag, sourceFlag, textFlag} from '../cli/flags.js';
import {paint, short} from '../cli/style.js';

export default class Propose extends SigningWritingCommand {
  static override summary = 'Propose a candidate bundle whose parent is the active bundle.';
  static override description =
    'Writes the candidate manifest, its manifest_diff.json against the active bundle, then record.json ' +
    '(proposed). The same run id and generation again return the existing record.';
  static override examples = [
    '<%= config.bin %> propose --from ./context/candidate --rationale "shorter playbook"',
    'cat candidate.json | <%= config.bin %> propose --from - --run-id nightly --generation 3 --json',
  ];
  static override flags = {
    from: sourceFlag('from', {
      summary: 'Bundle source: a component folder, a manifest JSON file, or - for stdin.',
      required: true,
      stdin: true,
    }),
    'run-id': textFlag('run-id', {summary: 'The run that produced this candidate (default "manual").', helpValue: 'R'}),
    generation: integerFlag('generation', {
      summary: 'Generation within the run (default 0).',
      min: 0,
      max: Number.MAX_SAFE_INTEGER,
      helpValue: 'G',
    }),
    rationale: textFlag('rationale', {summary: 'Why this candidate should be better.'}),
    'allow-unchanged': Flags.boolean({
      summary: "Propose it even when its components are exactly the active bundle's (refused otherwise, exit 2).",
    }),
  };

  async run() {
    const {flags} = await this.parse(Propose);
    const result = await propose({
      knowledge: flags.knowledge,
      signingKey: flags['signing-key'],
      scenario: flags.scenario,
      from: flags.from,
      runId: flags['run-id'],
      generation: flags.generation,
      rationale: flags.rationale,
      lockTimeout: flags['lock-timeout'],
      allowUnchanged: flags['allow-unchanged'],
    });
    return this.done(result, () => [
      `${result.created ? paint.green('proposed') : 'already proposed'} ${result.bundle_digest}`,
      `  scenario ${result.scenario}, parent ${short(result.parent_digest)}, lifecycle ${result.lifecycle}`,
    ]);
  }
}
