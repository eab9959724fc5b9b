import * as Flags from '@oclif/core/flags';
import {AutoctxCommand} from '../../cli/base-command.js';
import {hostFlag, locationFlags, locationOf} from '../../cli/hook-flags.js';
import {hookUninstall, type HookHost} from '../../core/delivery/hook-install.js';
import {dryRunLines} from '../../cli/patch-lines.js';

export default class HookUninstall extends AutoctxCommand {
  static override summary = "Take autoctx's hooks out of a host's settings (everything else kept byte for byte).";
  static override description =
    'A settings file hook install created is removed once nothing else is in it, and bootstrap injection is ' +
    "turned off in your autoctx configuration (unless the other host's hooks are still installed there). " +
    '--dry-run prints the change as a unified diff.';
  static override examples = ['<%= config.bin %> hook uninstall --host claude-code --project .'];
  static override flags = {
    host: hostFlag,
    ...locationFlags,
    'dry-run': Flags.boolean({summary: 'Show the change as a unified diff, and change nothing.'}),
  };

  async run() {
    const {flags} = await this.parse(HookUninstall);
    const result = hookUninstall({host: flags.host as HookHost, location: locationOf(flags), dryRun: flags['dry-run']});
    return this.done(result, () => [
      ...(result.diff !== undefined ? dryRunLines(result.diff) : []),
      `${result.status}: ${result.host} hooks in ` +
        `${result.file}${result.changes.length ? ` (${result.changes.join('; ')})` : ''}`,
    ]);
  }
}
