import * as Args from '@oclif/core/args';
import {Command as OclifCommand} from '@oclif/core/command';
import AutoctxHelp from '../cli/help.js';

/** `autoctx help [COMMAND...]`: the same text as `autoctx COMMAND --help` (or the root help). */
export default class HelpCommand extends OclifCommand {
  static override summary =
    'Show help for autoctx, or for one command (autoctx help confirm, autoctx help bundle show).';
  static override strict = false;
  static override args = {
    command: Args.string({description: 'The command, its words separated by spaces.', required: false}),
  };
  static override examples = [
    '<%= config.bin %> help',
    '<%= config.bin %> help confirm',
    '<%= config.bin %> help bundle show',
  ];

  async run(): Promise<void> {
    const {argv} = await this.parse(HelpCommand);
    await new AutoctxHelp(this.config).showHelp(argv as string[]);
  }
}
