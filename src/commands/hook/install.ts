import * as Flags from '@oclif/core/flags';
import {AutoctxCommand} from '../../cli/base-command.js';
import {hostFlag, locationFlags, locationOf} from '../../cli/hook-flags.js';
import {hookInstall, type HookHost} from '../../core/delivery/hook-install.js';
import {dryRunLines} from '../../cli/patch-lines.js';

export default class HookInstall extends AutoctxCommand {
  static override summary =
    "Register autoctx's SessionStart and UserPromptSubmit hooks with Claude Code or Codex (injection " +
    'stays off until hook enable).';
  static override description =
    'Claude Code --project writes .claude/settings.local.json (not committed: the paths differ per ' +
    "teammate); Codex --project writes .codex/hooks.json; --user writes the host's user settings. The " +
    'command is the absolute path of node and of the hook entry point, with an explicit timeout of 5 s; ' +
    'the tree, scenario and opt-in live in your own autoctx configuration, keyed by project. Everything ' +
    'else in the file is kept byte for byte; a file that cannot be parsed is refused, and so is a second ' +
    'registration in another layer. Claude Code --project also adds .claude/settings.local.json to the ' +
    "project's .gitignore unless a line there already ignores it. --dry-run prints the change as a unified diff.";
  static override examples = [
    '<%= config.bin %> hook install --host claude-code --project . --knowledge ./knowledge --scenario demo',
    '<%= config.bin %> hook install --host codex --user --knowledge ~/work/knowledge --scenario demo --dry-run',
  ];
  static override flags = {
    host: hostFlag,
    ...locationFlags,
    knowledge: Flags.string({
      char: 'k',
      summary: 'The knowledge root the hooks read.',
      required: true,
      helpValue: 'DIR',
    }),
    scenario: Flags.string({
      char: 's',
      summary: 'The scenario whose package the hooks deliver.',
      required: true,
      helpValue: 'S',
    }),
    'dry-run': Flags.boolean({summary: 'Show the change as a unified diff, and change nothing.'}),
  };

  async run() {
    const {flags} = await this.parse(HookInstall);
    const result = hookInstall({
      host: flags.host as HookHost,
      location: locationOf(flags),
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      dryRun: flags['dry-run'],
    });
    return this.done(result, () => [
      ...(result.diff !== undefined ? dryRunLines(result.diff) : []),
      `${result.status}: ${result.host} hooks in ` +
        `${result.file}${result.changes.length ? ` (${result.changes.join('; ')})` : ''}`,
      `bootstrap injection: ${result.settings.enabled ? 'on' : 'off'}`,
      ...result.notes,
    ]);
  }
}
