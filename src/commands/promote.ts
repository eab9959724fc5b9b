import {actorFlag, allowedSignersFlag, signingKeyFlag} from '../cli/release-flags.js';
import {promote} from '../core/promotion/promote.js';
import {WritingCommand} from '../cli/base-command.js';
import {digestArg, secondsFlag, textFlag} from '../cli/flags.js';
import {DEFAULT_EVALUATOR_TIMEOUT_SECONDS} from '../core/common/defaults.js';
import {paint, short} from '../cli/style.js';
import {verdictLine} from '../model/promotion/guardrails.js';

export default class Promote extends WritingCommand {
  static override summary = 'Promote a confirmed candidate: every gate, then the atomic pointer swap.';
  static override description =
    'Checks the confirmed record, replays the comparison from the persisted evidence, checks ' +
    "serveability, the manifest diff, one cohort, the plan's guardrails and the bound pre_promotion audit, then " +
    'compare-and-swaps active.json. Exit 3 when a guardrail fails or is unmeasured, 5 when the audit holds, 6 when ' +
    'the active bundle is no longer the parent (the candidate is rejected as stale), 8 on any integrity failure.';
  static override examples = [
    '<%= config.bin %> promote bb5f26ed',
    '<%= config.bin %> promote bb5f26ed --rationale "better triage" --json',
  ];
  static override args = {candidate: digestArg('the candidate', 'Candidate bundle digest or a unique prefix.')};
  static override flags = {
    'signing-key': signingKeyFlag,
    'allowed-signers': allowedSignersFlag,
    actor: actorFlag,
    rationale: textFlag('rationale', {summary: 'Why it is promoted (default: the comparison reason).'}),
    audit: textFlag('audit', {
      summary: 'The audit command; must equal the one bound at evaluation (it is used anyway).',
      helpValue: 'CMD',
    }),
    timeout: secondsFlag('timeout', {summary: `Seconds for the audit (default ${DEFAULT_EVALUATOR_TIMEOUT_SECONDS}).`}),
  };

  async run() {
    const {args, flags} = await this.parse(Promote);
    const result = await promote({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      candidate: args.candidate,
      rationale: flags.rationale,
      actor: flags.actor,
      audit: flags.audit,
      timeoutSeconds: flags.timeout,
      lockTimeout: flags['lock-timeout'],
      signingKey: flags['signing-key'],
      allowedSigners: flags['allowed-signers'],
    });
    if (result.status === 'rejected')
      return this.done(result, () => [`${paint.red('rejected')} ${short(result.bundle_digest)}: ${result.reason}`]);
    return this.done(result, () => [
      `${result.already_promoted ? 'already promoted' : paint.green('promoted')} ` +
        `${short(result.bundle_digest)} (was ${short(result.incumbent_digest)}), promotion ` +
        `${result.promotion_id}${result.causal_attribution ? ', causal attribution recorded' : ''}`,
      ...(result.guardrails ?? []).map((v) => `  guardrail ${verdictLine(v)}`),
    ]);
  }
}
