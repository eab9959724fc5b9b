import {AutoctxCommand} from '../../cli/base-command.js';
import {locationFlags, locationOf} from '../../cli/hook-flags.js';
import {hookEnable} from '../../core/delivery/hook-install.js';

export default class HookEnable extends AutoctxCommand {
  static override summary =
    "Turn bootstrap injection through the installed hooks on (your own setting, never the repository's).";
  static override examples = ['<%= config.bin %> hook enable --project .'];
  static override flags = {...locationFlags};

  async run() {
    const {flags} = await this.parse(HookEnable);
    const result = hookEnable({location: locationOf(flags), enabled: true});
    return this.done(result, () => [
      `${result.status}: bootstrap injection ${result.enabled ? 'on' : 'off'} for ${result.key}`,
    ]);
  }
}
