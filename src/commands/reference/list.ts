import {ScenarioCommand} from '../../cli/base-command.js';
import {referenceList} from '../../core/delivery/curation.js';

export default class ReferenceList extends ScenarioCommand {
  static override summary =
    'List the context references in declared order, with whether each takes part, and the grants.';
  static override examples = ['<%= config.bin %> reference list --scenario support'];

  async run() {
    const {flags} = await this.parse(ReferenceList);
    const result = referenceList({knowledge: flags.knowledge, scenario: flags.scenario});
    return this.done(result, () => [
      ...(result.references.length === 0
        ? [`${result.scenario} refers to no scenario`]
        : result.references.map((r, i) => `${i + 1}. ${r.scenario}  ${r.standing.replace('_', ' ')}`)),
      `grants read access to: ${result.grants.length === 0 ? 'none' : result.grants.join(', ')}`,
    ]);
  }
}
