import * as Flags from '@oclif/core/flags';
import {AutoctxCommand} from '../../cli/base-command.js';
import {hostFlag, locationFlags, locationOf} from '../../cli/hook-flags.js';
import {hookUninstall, type HookHost} from '../../core/delivery/hook-install.js';

export default class HookUninstall extends AutoctxCommand {
  static override summary = "Take autoctx's hooks out of a host's settings (everything else kept byte for byte).";
  static override examples = ['<%= config.bin %> hook uninstall --host claude-code --project .'];
  static override flags = {
    host: hostFlag,
    ...locationFlags,
    'dry-run': Flags.boolean({summary: 'Show what would change, and change nothing.'}),
  };

  async run() {
    const {flags} = await this.parse(HookUninstall);
    const result = hookUninstall({host: flags.host as HookHost, location: locationOf(flags), dryRun: flags['dry-run']});
    return this.done(result, () => [
      `${result.status}: ${result.host} hooks in ` +
        `${result.file}${result.changes.length ? ` (${result.changes.join('; ')})` : ''}`,
    ]);
  }
}
