import {prettyJson} from '../../canonical/index.js';
import {buildBundle} from '../../core/bundle/bundle.js';
import {AutoctxCommand} from '../../cli/base-command.js';
import {digestFlag, sourceFlag, textFlag} from '../../cli/flags.js';

export default class BundleBuild extends AutoctxCommand {
  static override summary = 'Compute a bundle manifest from SRC and print it; writes nothing.';
  static override description =
    'Needs no knowledge tree. For a folder SRC the scenario, epoch and parent come from the flags.';
  static override examples = [
    '<%= config.bin %> bundle build --from ./context/candidate --scenario support',
    '<%= config.bin %> bundle build --from manifest.json --json | jq -r .bundle_digest',
  ];
  static override flags = {
    from: sourceFlag('from', {
      summary: 'Bundle source: a component folder, a manifest JSON file, or - for stdin.',
      required: true,
      stdin: true,
    }),
    scenario: textFlag('scenario', {
      char: 's',
      summary: 'Scenario label of the manifest (folder SRC).',
      helpValue: 'S',
    }),
    'evaluator-epoch': textFlag('evaluator-epoch', {
      summary: 'Evaluator epoch (folder SRC; default epoch-1).',
      helpValue: 'E',
    }),
    parent: digestFlag('parent', {summary: 'Parent bundle digest (folder SRC; default none).', full: true}),
  };

  async run() {
    const {flags} = await this.parse(BundleBuild);
    const result = buildBundle({
      from: flags.from,
      scenario: flags.scenario,
      evaluatorEpoch: flags['evaluator-epoch'],
      parent: flags.parent,
    });
    return this.done(result, () => [prettyJson(result.manifest).trimEnd()]);
  }
}
