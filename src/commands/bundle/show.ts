import {showBundle} from '../../core/bundle/bundle.js';
import {ScenarioCommand} from '../../cli/base-command.js';
import {paint, short} from '../../cli/style.js';
import {digestArg} from '../../cli/flags.js';

export default class BundleShow extends ScenarioCommand {
  static override summary = 'Show a bundle: its lineage, lifecycle and components.';
  static override examples = [
    '<%= config.bin %> bundle show 6d9bc734',
    '<%= config.bin %> bundle show 6d9bc734 --json | jq .manifest.components',
  ];
  static override args = {
    digest: digestArg('the bundle', 'Bundle digest or a unique prefix of at least 8 hex characters.'),
  };

  async run() {
    const {args, flags} = await this.parse(BundleShow);
    const result = showBundle({knowledge: flags.knowledge, scenario: flags.scenario, digest: args.digest});
    const m = result.manifest;
    return this.done(result, () => [
      `${paint.bold(m.digest)}${result.active ? paint.green(' (active)') : ''}`,
      `  scenario ${m.scenario}, epoch ${m.evaluator_epoch}, parent ${short(m.parent_digest)}, lifecycle ` +
        `${result.lifecycle ?? '-'}`,
      ...m.components.map(
        (c) =>
          `  ${c.kind}/${c.key}  ${c.media_type}  ${Buffer.byteLength(c.content, 'utf8')} bytes  ${short(c.digest)}`,
      ),
    ]);
  }
}
