import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import {WritingCommand} from '../../cli/base-command.js';
import {textFlag} from '../../cli/flags.js';
import {actorFlag, allowedSignersFlag, expectRegistryFlag, scopeFlag, signingKeyFlag} from '../../cli/release-flags.js';
import {short} from '../../cli/style.js';
import {releaseRunnable} from '../../core/release/release-runnable.js';

export default class ReleaseRunnable extends WritingCommand {
  static override summary = 'Set which releases this deployment can run in a scope (all, or a list) and its default.';
  static override description =
    'SHADOW, CANARY and ACTIVE need a runnable release (BUNDLE_NOT_RUNNABLE otherwise). Until it is set, ' +
    'every named release is runnable. The change is a registry change with a receipt, like a transition.';
  static override strict = false;
  static override examples = [
    '<%= config.bin %> release runnable v20 v21 --default v20 --rationale "this build ships both"',
    '<%= config.bin %> release runnable --all --rationale "any"',
  ];
  static override args = {versions: Args.string({description: 'The runnable releases.', required: false})};
  static override flags = {
    all: Flags.boolean({summary: 'Every named release is runnable.'}),
    default: Flags.string({summary: 'The default release of this deployment.', helpValue: 'V'}),
    rationale: textFlag('rationale', {summary: 'Why (recorded in the receipt).', required: true}),
    scope: scopeFlag,
    'expect-registry': expectRegistryFlag,
    actor: actorFlag,
    'signing-key': signingKeyFlag,
    'allowed-signers': allowedSignersFlag,
  };

  async run() {
    const {argv, flags} = await this.parse(ReleaseRunnable);
    const result = await releaseRunnable({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      versions: argv as string[],
      all: flags.all,
      defaultVersion: flags.default,
      rationale: flags.rationale,
      scope: flags.scope,
      expectRegistry: flags['expect-registry'],
      actor: flags.actor,
      signingKey: flags['signing-key'],
      allowedSigners: flags['allowed-signers'],
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `runnable in ${result.scope}: ${result.runnable.versions?.join(', ') ?? 'every release'}` +
        `${result.runnable.default_version ? `, default ${result.runnable.default_version}` : ''}; registry ` +
        `${short(result.registry_after)} (receipt ${result.receipt_seq})`,
    ]);
  }
}
