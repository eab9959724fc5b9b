import {log} from '../core/log.js';
import {ScenarioCommand} from '../cli/base-command.js';
import {short} from '../cli/style.js';

export default class Log extends ScenarioCommand {
  static override summary = 'List the promotions and rollbacks of a scenario, newest first.';
  static override examples = ['<%= config.bin %> log --scenario support', '<%= config.bin %> log --json | jq ".entries[0]"'];

  async run() {
    const {flags} = await this.parse(Log);
    const result = log({knowledge: flags.knowledge, scenario: flags.scenario});
    return this.done(result, () =>
      result.entries.length === 0
        ? [`${result.scenario}: no promotions or rollbacks yet`]
        : result.entries.map((e) => `${e.at}  ${e.type.padEnd(9)} ${short(e.from_digest)} -> ${short(e.to_digest)}  ${e.rationale}`),
    );
  }
}
