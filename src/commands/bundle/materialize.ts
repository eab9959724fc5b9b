import * as Args from '@oclif/core/args';
import {digestArg} from '../../cli/flags.js';
import {materialize} from '../../core/bundle/bundle.js';
import {ScenarioCommand} from '../../cli/base-command.js';
import {paint} from '../../cli/style.js';

export default class BundleMaterialize extends ScenarioCommand {
  static override summary = 'Write a bundle out as files: manifest.json plus <kind>/<key>.<ext>.';
  static override description =
    'The folder must be new or empty. Proposing the materialized folder gives the same digest.';
  static override examples = ['<%= config.bin %> bundle materialize 6d9bc734 ./out'];
  static override args = {
    digest: digestArg('the bundle', 'Bundle digest or a unique prefix.'),
    dir: Args.string({description: 'Folder to write (new or empty).', required: true}),
  };

  async run() {
    const {args, flags} = await this.parse(BundleMaterialize);
    const result = materialize({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      digest: args.digest,
      directory: args.dir,
    });
    return this.done(result, () => [
      `${paint.green('materialized')} ${result.bundle_digest} into ${result.directory} (${result.files.length} files)`,
    ]);
  }
}
