import {diffBundles} from '../core/bundle.js';
import {ScenarioCommand} from '../cli/base-command.js';
import {short} from '../cli/style.js';
import {digestArg} from '../cli/flags.js';

export default class Diff extends ScenarioCommand {
  static override summary = 'Show the component-level difference of bundle A against bundle B.';
  static override examples = ['<%= config.bin %> diff 6d9bc734 9fe14ef5', '<%= config.bin %> diff 6d9bc734 9fe14ef5 --json | jq .manifest_diff.changes'];
  static override args = {
    a: digestArg('the tested bundle', 'Tested bundle (digest or prefix).'),
    b: digestArg('the comparison bundle', 'Comparison bundle (digest or prefix).'),
  };

  async run() {
    const {args, flags} = await this.parse(Diff);
    const result = diffBundles({knowledge: flags.knowledge, scenario: flags.scenario, a: args.a, b: args.b});
    const changes = result.manifest_diff.changes;
    return this.done(result, () => [
      `${short(result.tested_bundle_digest)} against ${short(result.comparison_bundle_digest)}: ${changes.length} change${changes.length === 1 ? '' : 's'}`,
      ...changes.map((c) => {
        const sign = c.comparison_component_digest === null ? '+' : c.tested_component_digest === null ? '-' : '~';
        return `  ${sign} ${c.component_kind}/${c.component_key}  ${short(c.comparison_component_digest)} -> ${short(c.tested_component_digest)}`;
      }),
    ]);
  }
}
