import * as Flags from '@oclif/core/flags';
import {rollback} from '../core/rollback/rollback.js';
import {WritingCommand} from '../cli/base-command.js';
import {digestFlag} from '../cli/flags.js';
import {actorFlag, scopeFlag, signingKeyFlag, allowedSignersFlag} from '../cli/release-flags.js';
import {paint, short} from '../cli/style.js';

export default class Rollback extends WritingCommand {
  static override summary = 'Roll the scope back to a release that served before, recorded as an execution RBX-….';
  static override description =
    "Without --to, the target is the recorded rollback target (active.json's, or in another scope the " +
    "release its ACTIVE replaced); with --to, a version the ACTIVE release's descriptor declares. Every " +
    'execution is recorded in rollbacks/ with the conditions it was checked against: the from-release is ' +
    'ACTIVE, the target is declared, has served in this scope, is not RETIRED, verifies and is runnable, ' +
    'and a rationale is given. A refused rollback is recorded, changes nothing else and exits 3; a blank ' +
    '--rationale is such a refusal. In the global scope an executed rollback is the compare-and-swap ' +
    'move of active.json (--expect-active D: only if D is active, exit 6 otherwise; a re-run after a ' +
    'completed rollback from D reports it). --emergency executes at once and awaits a second, different ' +
    'approver (autoctx rollback approve).';
  static override examples = [
    '<%= config.bin %> rollback --rationale "regression in production"',
    '<%= config.bin %> rollback --to v19 --rationale "v20 drops citations" --emergency',
    '<%= config.bin %> rollback --scope eu --rationale "bad canary" --json',
    '<%= config.bin %> rollback --rationale "bad deploy" --expect-active 6d9bc734 --json',
  ];
  static override flags = {
    'signing-key': signingKeyFlag,
    'allowed-signers': allowedSignersFlag,
    rationale: Flags.string({
      summary: 'Why the rollback is needed (recorded; a blank one is refused and recorded).',
      helpValue: 'TEXT',
      required: true,
      aliases: ['reason'],
    }),
    to: Flags.string({
      summary:
        "The release to restore: one the ACTIVE release's descriptor declares (default: the recorded rollback target).",
      helpValue: 'VERSION',
    }),
    scope: scopeFlag,
    emergency: Flags.boolean({
      summary: 'Execute at once and await a second approver (rollback approve).',
      default: false,
    }),
    actor: actorFlag,
    'expect-active': digestFlag('expect-active', {
      summary: "Only roll back if this bundle is the scope's ACTIVE (exit 6 otherwise).",
    }),
  };

  async run() {
    const {flags} = await this.parse(Rollback);
    const result = await rollback({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      rationale: flags.rationale,
      to: flags.to,
      scope: flags.scope,
      emergency: flags.emergency,
      actor: flags.actor,
      expectActive: flags['expect-active'],
      lockTimeout: flags['lock-timeout'],
      signingKey: flags['signing-key'],
      allowedSigners: flags['allowed-signers'],
    });
    const move =
      `${result.from_version ?? short(result.from_digest ?? 'none')} -> ` +
      `${result.to_version ?? (result.bundle_digest ? short(result.bundle_digest) : 'no target')}`;
    return this.done(result, () => [
      result.status === 'refused'
        ? `${paint.red('refused')} rollback of ${result.scenario} in ${result.scope}: ${move} (${result.execution_key})`
        : `${result.already_done ? 'already rolled back' : paint.green('rolled back')} ${result.scenario} in ` +
          `${result.scope}: ${move} (${result.execution_key}` +
          `${result.execution_status === 'AWAITING_APPROVAL' ? ', emergency: awaiting a second approver' : ''}` +
          `)`,
      ...result.conditions.filter((c) => !c.passed).map((c) => `  ${c.code}: ${c.detail}`),
    ]);
  }
}
