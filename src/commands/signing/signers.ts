import * as Flags from '@oclif/core/flags';
import {WritingCommand} from '../../cli/base-command.js';
import {actorFlag, allowedSignersFlag, signingKeyFlag} from '../../cli/release-flags.js';
import {paint} from '../../cli/style.js';
import {signingSigners} from '../../core/signing/signing-history.js';

export default class SigningSigners extends WritingCommand {
  static override summary = "Change the scenario's allowed_signers, signed by a principal of the current version.";
  static override description =
    'Records the new version in context_bundles/signing/signers/<seq>.json, signed by --signing-key as ' +
    '--actor, who must be a principal of the version it replaces, then writes allowed_signers. Rotate a ' +
    "key with valid-after and valid-before (checked at each record's signed time) rather than by " +
    'deleting its line. Give the anchor with --allowed-signers to check the history first.';
  static override examples = [
    '<%= config.bin %> signing signers --from ops/allowed_signers.next --signing-key ' +
      '~/.ssh/autoctx_ed25519 --actor alice@example.com',
  ];
  static override flags = {
    from: Flags.string({summary: 'The new allowed_signers file.', helpValue: 'FILE', required: true}),
    'signing-key': signingKeyFlag,
    'allowed-signers': allowedSignersFlag,
    actor: actorFlag,
  };

  async run() {
    const {flags} = await this.parse(SigningSigners);
    const result = await signingSigners({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      from: flags.from,
      signingKey: flags['signing-key'],
      allowedSigners: flags['allowed-signers'],
      actor: flags.actor,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `${result.status === 'updated' ? paint.green('updated') : 'unchanged'} allowed_signers of ` +
        `${result.scenario}: ${result.allowed_signers_sha256.slice(0, 12)}` +
        `${result.change_seq !== null ? ` (change ${result.change_seq})` : ''}`,
    ]);
  }
}
