import {log} from '../core/log.js';
import {ScenarioCommand} from '../cli/base-command.js';
import {short} from '../cli/style.js';

/** What the human listing adds for a move that is not simply history. */
const SERVICE: Record<string, string> = {serving: '  (serving)', served: '', never: '  (never served)', pending: '  (interrupted: the pointer did not move)', unknown: '  (history does not verify: run autoctx verify)'};

export default class Log extends ScenarioCommand {
  static override summary = 'List the promotions, rollbacks and epoch rollovers of a scenario, newest first, marking moves that never served.';
  static override examples = ['<%= config.bin %> log --scenario support', '<%= config.bin %> log --json | jq ".entries[0]"'];

  async run() {
    const {flags} = await this.parse(Log);
    const result = log({knowledge: flags.knowledge, scenario: flags.scenario});
    return this.done(result, () =>
      result.entries.length === 0
        ? [`${result.scenario}: no promotions, rollbacks or rollovers yet`]
        : result.entries.map((e) => `${e.at}  ${e.type.padEnd(9)} ${short(e.from_digest)} -> ${short(e.to_digest)}  ${e.rationale}${SERVICE[e.served]}`),
    );
  }
}
