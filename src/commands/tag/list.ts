import {ScenarioCommand} from '../../cli/base-command.js';
import {paint} from '../../cli/style.js';
import {tagList} from '../../core/delivery/curation.js';

export default class TagList extends ScenarioCommand {
  static override summary = 'List the bootstrap-context tags in curated order.';
  static override examples = [
    '<%= config.bin %> tag list',
    '<%= config.bin %> tag list --json | jq -r ".tags[].component_digest"',
  ];

  async run() {
    const {flags} = await this.parse(TagList);
    const result = tagList({knowledge: flags.knowledge, scenario: flags.scenario});
    return this.done(result, () =>
      result.tags.length === 0
        ? [`no bootstrap tags in ${result.scenario}`]
        : result.tags.map(
            (t, i) =>
              `${i + 1}. ${t.kind}/${t.key}  ${t.component_digest}` +
              `${t.serving ? '' : paint.dim('  (not in the serving bundle)')}` +
              `${t.secret ? paint.yellow('  (secret kind: never rendered)') : ''}`,
          ),
    );
  }
}
