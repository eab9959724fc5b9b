import {diffBundles} from '../core/bundle/bundle.js';
import {ScenarioCommand} from '../cli/base-command.js';
import * as Flags from '@oclif/core/flags';
import {paint, short} from '../cli/style.js';
import {digestArg} from '../cli/flags.js';

export default class Diff extends ScenarioCommand {
  static override summary =
    'Show what changed from bundle B to bundle A: each changed component as a unified text diff.';
  static override description =
    "People get a unified diff (as git diff shows it) of every changed component, from B's text to A's, " +
    'labelled as git labels it: --- a/ for the text it goes from (B), +++ b/ for the text it goes to (A); ' +
    '--stat lists the changed components only. --json gives the manifest diff and, in content_diffs, ' +
    'each change as a patch and as hunks.';
  static override examples = [
    '<%= config.bin %> diff 6d9bc734 9fe14ef5',
    '<%= config.bin %> diff 6d9bc734 9fe14ef5 --stat',
    '<%= config.bin %> diff 6d9bc734 9fe14ef5 --json | jq -r .content_diffs[0].patch',
  ];
  static override flags = {
    stat: Flags.boolean({summary: 'The changed components and their line counts only, no text.'}),
  };
  static override args = {
    a: digestArg('the tested bundle', 'Tested bundle (digest or prefix).'),
    b: digestArg('the comparison bundle', 'Comparison bundle (digest or prefix).'),
  };

  async run() {
    const {args, flags} = await this.parse(Diff);
    const result = diffBundles({knowledge: flags.knowledge, scenario: flags.scenario, a: args.a, b: args.b});
    const changes = result.manifest_diff.changes;
    const diffs = result.content_diffs;
    const colour = (line: string) =>
      line.startsWith('+') && !line.startsWith('+++')
        ? paint.green(line)
        : line.startsWith('-') && !line.startsWith('---')
          ? paint.red(line)
          : line.startsWith('@@')
            ? paint.cyan(line)
            : line;
    return this.done(result, () => [
      `${short(result.tested_bundle_digest)} against ${short(result.comparison_bundle_digest)}: ` +
        `${changes.length} change${changes.length === 1 ? '' : 's'}`,
      ...changes.flatMap((c, i) => {
        const d = diffs[i]!;
        const sign = d.change === 'added' ? '+' : d.change === 'removed' ? '-' : '~';
        const states =
          d.comparison_state !== null && d.tested_state !== null && d.comparison_state !== d.tested_state
            ? `  ${d.comparison_state} -> ${d.tested_state}`
            : d.change === 'added' && d.tested_state !== 'PRESENT'
              ? `  (${d.tested_state})`
              : d.change === 'removed' && d.comparison_state !== 'PRESENT'
                ? `  (was ${d.comparison_state})`
                : '';
        const head =
          `${sign} ${c.component_kind}/${c.component_key}  ${short(c.comparison_component_digest)} -> ` +
          `${short(c.tested_component_digest)}${states}  (+${d.added_lines} -${d.removed_lines})`;
        if (flags.stat) return [`  ${head}`];
        if (d.patch === null)
          return ['', paint.bold(head), '  (the two texts are too different to diff line by line in time)'];
        return ['', paint.bold(head), ...d.patch.trimEnd().split('\n').map(colour)];
      }),
    ]);
  }
}
