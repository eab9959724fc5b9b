import {verify} from '../core/verify.js';
import {AutoctxCommand, storeFlags} from '../cli/base-command.js';
import {EXIT} from '../errors.js';
import {paint} from '../cli/style.js';

export default class Verify extends AutoctxCommand {
  static override summary = 'Re-hash and re-check every file of the knowledge tree.';
  static override description =
    'Checks every manifest digest, every file against its schema and digests, and every pointer against the files it names. Exit 0 when clean (warnings name states an interrupted run leaves behind), exit 8 with the list of problems otherwise.';
  static override examples = ['<%= config.bin %> verify', '<%= config.bin %> verify --scenario support --json'];
  static override flags = {...storeFlags};

  async run() {
    const {flags} = await this.parse(Verify);
    const result = verify({knowledge: flags.knowledge, scenario: flags.scenario});
    return this.done(
      result,
      () => [
        ...result.errors.map((e) => `${paint.red('error')} ${e.code} ${e.message}`),
        ...result.warnings.map((w) => `${paint.yellow('warning')} ${w.code} ${w.message}`),
        `${result.status === 'ok' ? paint.green('verified') : paint.red('verification failed')}: ${result.scenarios.length} scenario(s), ${result.bundles_checked} bundles, ${result.files_checked} files, ${result.errors.length} errors, ${result.warnings.length} warnings`,
      ],
      result.status === 'ok' ? EXIT.OK : EXIT.INTEGRITY,
    );
  }
}
