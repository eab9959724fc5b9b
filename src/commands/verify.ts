import {verifyInParallel} from '../core/common/verify.js';
import * as Flags from '@oclif/core/flags';
import {ScenarioCommand} from '../cli/base-command.js';
import {paint} from '../cli/style.js';
import {allowedSignersFlag} from '../cli/release-flags.js';

export default class Verify extends ScenarioCommand {
  static override summary = 'Re-hash and re-check every file of the knowledge tree.';
  static override description =
    'Checks every manifest digest, every file against its schema and digests, and every pointer against ' +
    'the files it names. Exit 0 when clean (warnings name states an interrupted run leaves behind; notes ' +
    "name what was accepted on another implementation's files alone), exit 8 with the list of problems " +
    'otherwise.';
  static override examples = [
    '<%= config.bin %> verify',
    '<%= config.bin %> verify --scenario support --json',
    '<%= config.bin %> verify --extends origin/main',
  ];
  static override flags = {
    'allowed-signers': allowedSignersFlag,
    extends: Flags.string({
      helpValue: 'REV',
      description:
        "also check that the tree extends the knowledge history of git revision REV (a pull request's base " +
        'branch): every file REV holds that autoctx writes once (a bundle, a promotion, a receipt, a history ' +
        'entry) is still here with the same bytes (HISTORY_REWRITTEN otherwise)',
    }),
    'replay-tolerance': Flags.boolean({
      description:
        'accept a replay that matches only within the cross-runtime tolerance (16 ULP or 1e-12 of the ' +
        'half-width), as for records another implementation wrote; by default a replay must be bit for bit',
    }),
  };

  async run() {
    const {flags} = await this.parse(Verify);
    const result = await verifyInParallel({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      replayTolerance: flags['replay-tolerance'],
      allowedSigners: flags['allowed-signers'],
      extends: flags.extends,
    });
    return this.done(result, () => [
      ...result.errors.map((e) => `${paint.red('error')} ${e.code} ${e.message}`),
      ...result.warnings.map((w) => `${paint.yellow('warning')} ${w.code} ${w.message}`),
      ...result.notes.map((n) => `${paint.dim('note')} ${n.code} ${n.message}`),
      `${result.status === 'ok' ? paint.green('verified') : paint.red('verification failed')}: ` +
        `${result.scenarios.length} scenario(s), ${result.bundles_checked} bundles, ${result.files_checked} ` +
        `files, ${result.errors.length} errors, ${result.warnings.length} ` +
        `warnings${result.notes.length > 0 ? `, ${result.notes.length} notes` : ''}`,
    ]);
  }
}
