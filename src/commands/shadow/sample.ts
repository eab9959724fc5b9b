import * as Flags from '@oclif/core/flags';
import {WritingCommand} from '../../cli/base-command.js';
import {scopeFlag} from '../../cli/release-flags.js';
import {basisPointsText} from '../../model/release/release.js';
import {shadowSample} from '../../core/release/shadow.js';

export default class ShadowSample extends WritingCommand {
  static override summary =
    "Whether an event is in the shadow run of the scope's SHADOW release (a stable hash of its id).";
  static override description =
    "In the sample when the hash of the event id falls below the release's shadow share (default 0: " +
    "off). --consume takes one of the day's runs (UTC; default cap 100), counted in the state area under " +
    'its lock, so concurrent callers never pass the cap; the count is per machine. Answers sampled or ' +
    'not_sampled, both exit 0.';
  static override examples = [
    '<%= config.bin %> shadow sample --event evt-123',
    '<%= config.bin %> shadow sample --event evt-123 --consume --json',
  ];
  static override flags = {
    event: Flags.string({summary: 'The event id.', helpValue: 'E', required: true}),
    consume: Flags.boolean({summary: "Take one of the day's shadow runs when sampled."}),
    scope: scopeFlag,
  };

  async run() {
    const {flags} = await this.parse(ShadowSample);
    const r = await shadowSample({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      event: flags.event,
      consume: flags.consume,
      scope: flags.scope,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(r, () => [
      r.version === null
        ? `not sampled: scope ${r.scope} has no runnable SHADOW ` +
          `release${r.skipped.length ? ` (${r.skipped.join(', ')} not runnable here)` : ''}`
        : `${r.status === 'sampled' ? 'sampled' : 'not sampled'} for ${r.version}: ${r.reason}, bucket ` +
          `${r.bucket} against ${basisPointsText(r.basis_points)}; ${r.count} of ${r.daily_cap} today ` +
          `(${r.date}, this machine)${r.consumed ? ', one consumed' : ''}`,
    ]);
  }
}
