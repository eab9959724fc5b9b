import {AutoctxCommand} from '../../cli/base-command.js';
import {locationFlags, locationOf} from '../../cli/hook-flags.js';
import {hookEnable} from '../../core/delivery/hook-install.js';

export default class HookDisable extends AutoctxCommand {
  static override summary =
    "Turn bootstrap injection through the installed hooks off (your own setting, never the repository's).";
  static override examples = ['<%= config.bin %> hook disable --project .'];
  static override flags = {...locationFlags};

  async run() {
    const {flags} = await this.parse(HookDisable);
    const result = hookEnable({location: locationOf(flags), enabled: false});
    return this.done(result, () => [
      `${result.status}: bootstrap injection ${result.enabled ? 'on' : 'off'} for ${result.key}`,
    ]);
  }
}
