import * as Flags from '@oclif/core/flags';
import {WritingCommand} from '../../cli/base-command.js';
import {integerFlag} from '../../cli/flags.js';
import {prepare} from '../../core/delivery/bootstrap.js';
import {BOOTSTRAP_LIFECYCLES} from '../../model/delivery/bootstrap-receipt.js';
import {packageSummary} from '../../cli/bootstrap-view.js';

export default class BootstrapPrepare extends WritingCommand {
  static override summary =
    'Render the bootstrap package and record a delivery receipt (in knowledge/.state, never committed).';
  static override description =
    'Off unless --enabled: a disabled request is skipped. A ready package has a pending receipt, which ' +
    'the host claims (bootstrap claim) before it shows the package. With --event-id, a retry of the same ' +
    'event returns the same package and receipt while pending, and skipped after it was claimed; the ' +
    'same event with another byte limit, lifecycle, integration or handoff is refused. Ready, empty and ' +
    'skipped all exit 0.';
  static override examples = [
    '<%= config.bin %> bootstrap prepare --scenario demo --integration claude-code --lifecycle startup ' +
      '--enabled --event-id "$SESSION_ID" --json',
  ];
  static override flags = {
    integration: Flags.string({
      summary: 'The host integration, e.g. claude-code or codex (1-64 printable ASCII, no spaces).',
      required: true,
      helpValue: 'NAME',
    }),
    lifecycle: Flags.string({
      summary: 'The session lifecycle event.',
      required: true,
      options: [...BOOTSTRAP_LIFECYCLES],
    }),
    enabled: Flags.boolean({
      summary: 'Opt in (off by default; the hooks pass their configured opt-in).',
      default: false,
    }),
    'event-id': Flags.string({
      summary: 'A stable id of the host event (hashed, never stored): makes retries idempotent.',
      helpValue: 'E',
    }),
    handoff: Flags.string({summary: 'An exact handoff revision to put first, ID@N.', helpValue: 'ID@N'}),
    user: Flags.string({
      summary: "The user the session is for (routing: a canary member gets the canary's curated context).",
      helpValue: 'U',
    }),
    session: Flags.string({summary: "The session id (routing's requester when no user is given).", helpValue: 'ID'}),
    'max-bytes': integerFlag('max-bytes', {
      summary: "The package's byte limit (UTF-8), 512 to 8192.",
      min: 512,
      max: 8192,
      default: 4096,
      helpValue: 'N',
    }),
  };

  async run() {
    const {flags} = await this.parse(BootstrapPrepare);
    const result = await prepare({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      integration: flags.integration,
      lifecycle: flags.lifecycle,
      enabled: flags.enabled,
      eventId: flags['event-id'],
      handoff: flags.handoff,
      maxBytes: flags['max-bytes'],
      user: flags.user,
      session: flags.session,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      ...packageSummary(result),
      `receipt ${result.receipt.receipt_id} ` +
        `${result.receipt.state}${result.receipt.stored ? '' : ' (not stored)'}` +
        `${result.reason ? `, ${result.reason.replace(/_/g, ' ')}` : ''}`,
    ]);
  }
}
