import {AutoctxCommand} from '../../cli/base-command.js';
import * as Flags from '@oclif/core/flags';
import {main} from '../../hooks/main.js';

export default class HookUserPromptSubmit extends AutoctxCommand {
  static override summary =
    'The agent-host hook for UserPromptSubmit: recall for the prompt, first-query dedup against the ' +
    'session start receipt, print the one line the host injects.';
  static override description =
    "Reads the host's JSON on stdin and its settings from the per-user configuration (autoctx hook " +
    'install). Prints at most one line on stdout, one content-free diagnostic line on stderr on failure, ' +
    'and always exits 0. Installed hooks run bin/autoctx-hook.js, which does the same without loading ' +
    'this CLI.';
  static override examples = [
    'echo \'{"session_id":"s1","cwd":"/work/app","hook_event_name":"UserPromptSubmit","prompt":"why is ' +
      'sync paused?"}\' | <%= config.bin %> hook user-prompt-submit --host claude-code',
  ];
  static override enableJsonFlag = false;
  static override flags = {
    host: Flags.string({summary: 'The agent host.', required: true, options: ['claude-code', 'codex']}),
  };

  async run() {
    const {flags} = await this.parse(HookUserPromptSubmit);
    await main(['user-prompt-submit', '--host', flags.host]);
  }
}
