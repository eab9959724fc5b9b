import {AutoctxCommand} from '../../cli/base-command.js';
import {locationFlags, locationOf} from '../../cli/hook-flags.js';
import {hookStatus} from '../../core/delivery/hook-install.js';

export default class HookStatus extends AutoctxCommand {
  static override summary = 'Each installed autoctx hook, whether its command still runs, and whether injection is on.';
  static override examples = [
    '<%= config.bin %> hook status --project .',
    '<%= config.bin %> hook status --user --json',
  ];
  static override flags = {...locationFlags};

  async run() {
    const {flags} = await this.parse(HookStatus);
    const result = hookStatus({location: locationOf(flags)});
    return this.done(result, () => [
      ...(result.hooks.length === 0
        ? ['no autoctx hooks installed here']
        : result.hooks.map(
            (h) =>
              `${h.host} ${h.event} in ${h.file}: ` +
              `${h.runs ? 'runs' : 'BROKEN (its node or entry point is gone: run hook install again)'}`,
          )),
      `bootstrap injection: ${result.enabled ? 'on' : 'off'}` +
        (result.settings
          ? ` (scenario ${result.settings.scenario} in ${result.settings.knowledge})`
          : ' (no settings: hook install)'),
    ]);
  }
}
