import * as Flags from '@oclif/core/flags';
import {WritingCommand} from '../../cli/base-command.js';
import {actorFlag, allowedSignersFlag, signingKeyFlag} from '../../cli/release-flags.js';
import {paint} from '../../cli/style.js';
import {signingStart} from '../../core/signing/signing-history.js';

export default class SigningStart extends WritingCommand {
  static override summary =
    'Start signing a scenario: its allowed_signers, and the records made before, listed by digest.';
  static override description =
    "Writes knowledge/<scenario>/allowed_signers (git's format) and context_bundles/signing/start.json, " +
    'signed by --signing-key as --actor (a principal of the file). From here on trial seals, promotions, ' +
    'rollback executions and approvals, and transition receipts to ACTIVE or CANARY are signed ' +
    "(<file>.sig); the records made before are listed by SHA-256 and stay valid unsigned. An approver's " +
    'line lists namespaces="autoctx,autoctx-approver".';
  static override examples = [
    '<%= config.bin %> signing start --from ops/allowed_signers --signing-key ~/.ssh/autoctx_ed25519 ' +
      '--actor alice@example.com',
  ];
  static override flags = {
    from: Flags.string({
      summary: 'The allowed_signers file to start with (kept outside the repository too, as the anchor).',
      helpValue: 'FILE',
      required: true,
    }),
    'signing-key': signingKeyFlag,
    'allowed-signers': allowedSignersFlag,
    actor: actorFlag,
  };

  async run() {
    const {flags} = await this.parse(SigningStart);
    const result = await signingStart({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      from: flags.from,
      signingKey: flags['signing-key'],
      allowedSigners: flags['allowed-signers'],
      actor: flags.actor,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `${result.status === 'started' ? paint.green('signing started') : 'signing had started'} in ` +
        `${result.scenario}: allowed_signers ${result.allowed_signers_sha256.slice(0, 12)}; ` +
        `${result.unsigned} earlier record(s) listed unsigned`,
    ]);
  }
}
