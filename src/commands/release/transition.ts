import * as Args from '@oclif/core/args';
import * as Flags from '@oclif/core/flags';
import {WritingCommand} from '../../cli/base-command.js';
import {integerFlag, secondsFlag, textFlag} from '../../cli/flags.js';
import {
  actorFlag,
  expectRegistryFlag,
  listFlag,
  percentFlag,
  scopeFlag,
  signingKeyFlag,
  allowedSignersFlag,
} from '../../cli/release-flags.js';
import {paint, short} from '../../cli/style.js';
import {releaseTransition} from '../../core/release/release-transition.js';

export default class ReleaseTransition extends WritingCommand {
  static override summary = 'Move a release to another state through the release gate; every attempt leaves a receipt.';
  static override description =
    'States: DRAFT, SHADOW, CANARY, ACTIVE, DEPRECATED, RETIRED (older names such as EVAL_ONLY, ' +
    'PRODUCTION and ROLLED_BACK are accepted here and recorded canonically). A blocked transition writes ' +
    'only its receipt and exits 3; an applied one writes its receipt, then swaps the registry. To ACTIVE ' +
    'in the global scope this is `autoctx promote`, with its gates and exit codes. CANARY needs ' +
    'everything ACTIVE needs but the swap.';
  static override examples = [
    '<%= config.bin %> release transition v21 --to SHADOW --shadow-percent 5 --rationale "try it on real sessions"',
    '<%= config.bin %> release transition v21 --to CANARY --canary-percent 10 --canary-tenants acme ' +
      '--rationale "10% of acme"',
    '<%= config.bin %> release transition v21 --to ACTIVE --rationale "canary held for a week" ' +
      '--expect-registry <digest>',
  ];
  static override args = {version: Args.string({description: 'The release name (any case).', required: true})};
  static override flags = {
    'signing-key': signingKeyFlag,
    'allowed-signers': allowedSignersFlag,
    to: Flags.string({summary: 'The target state (canonical or older name).', helpValue: 'STATE', required: true}),
    rationale: textFlag('rationale', {summary: 'Why (recorded in the receipt).', required: true}),
    scope: scopeFlag,
    'expect-registry': expectRegistryFlag,
    'canary-percent': percentFlag(
      'canary-percent',
      'Share of requesters in the canary, 0–100 (left out: the whole scope, or the share it has).',
    ),
    'canary-tenants': listFlag('Only these tenants are in the canary.', 'T'),
    'canary-resource-families': listFlag(
      'Only requests whose resource address starts with, or whose resource id equals, one of these.',
      'F',
    ),
    'canary-salt': Flags.string({
      summary:
        'Salt the cohort with this text instead of the version: give a new release the salt of the one ' +
        'before to keep its cohort.',
      helpValue: 'TEXT',
    }),
    'shadow-percent': percentFlag(
      'shadow-percent',
      'Share of events sampled for the shadow run, 0–100 (default 0: off).',
    ),
    'shadow-daily-cap': integerFlag('shadow-daily-cap', {
      summary: 'Shadow runs per UTC day at most (default 100).',
      min: 0,
      max: 1_000_000_000,
    }),
    actor: actorFlag,
    'dry-run': Flags.boolean({summary: 'Run the gate and report; write nothing.'}),
    timeout: secondsFlag('timeout', {summary: 'Seconds for the bound audit (CANARY and ACTIVE).'}),
  };

  async run() {
    const {args, flags} = await this.parse(ReleaseTransition);
    const result = await releaseTransition({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      version: args.version,
      to: flags.to,
      rationale: flags.rationale,
      scope: flags.scope,
      expectRegistry: flags['expect-registry'],
      canaryBasisPoints: flags['canary-percent'],
      canaryTenants: flags['canary-tenants'],
      canaryResourceFamilies: flags['canary-resource-families'],
      canarySalt: flags['canary-salt'],
      shadowBasisPoints: flags['shadow-percent'],
      shadowDailyCap: flags['shadow-daily-cap'],
      actor: flags.actor,
      dryRun: flags['dry-run'],
      timeoutSeconds: flags.timeout,
      lockTimeout: flags['lock-timeout'],
      signingKey: flags['signing-key'],
      allowedSigners: flags['allowed-signers'],
    });
    const move =
      `${result.version} ${result.from_state} -> ` +
      `${result.target_state}` +
      `${result.requested_state.toUpperCase() !== result.target_state ? ` (as ${result.requested_state})` : ''}` +
      ` in ${result.scope}`;
    return this.done(result, () => [
      result.status === 'applied'
        ? `${paint.green('applied')} ${move}` +
          `${result.deprecated_versions.length ? `; deprecated ${result.deprecated_versions.join(', ')}` : ''}` +
          `; registry ${short(result.registry_after)} (receipt ${result.receipt_seq})`
        : result.status === 'allowed'
          ? `${paint.green('allowed')} ${move} (dry run: nothing written)`
          : `${paint.red('blocked')} ${move}` +
            `${result.dry_run ? ' (dry run: nothing written)' : ` (receipt ${result.receipt_seq})`}`,
      ...result.blockers.map((b) => `  ${b.code}: ${b.detail}`),
    ]);
  }
}
