import {log} from '../core/common/log.js';
import {ScenarioCommand} from '../cli/base-command.js';
import {integerFlag, textFlag} from '../cli/flags.js';
import {short} from '../cli/style.js';

/** What the human listing adds for a move that is not simply history. */
const SERVICE: Record<string, string> = {
  serving: '  (serving)',
  served: '',
  never: '  (never served)',
  pending: '  (interrupted: the pointer did not move)',
  unknown: '  (history does not verify: run autoctx verify)',
};

export default class Log extends ScenarioCommand {
  static override summary =
    'The history of a scenario, newest first: init, proposals, screens, confirmations, rejections, ' +
    'promotions, rollbacks and epoch rollovers.';
  static override description =
    'Pointer moves are marked when they never served. A record keeps the time of its latest change only: ' +
    'a screen a candidate went past, or the confirmation of a candidate since promoted, has no entry of ' +
    'its own.';
  static override examples = [
    '<%= config.bin %> log --scenario support',
    '<%= config.bin %> log --limit 10',
    '<%= config.bin %> log --since 2026-11-01 --json | jq ".entries[0]"',
  ];
  static override flags = {
    limit: integerFlag('limit', {
      summary: 'At most N entries, the newest.',
      min: 1,
      max: 1_000_000_000,
      helpValue: 'N',
    }),
    since: textFlag('since', {summary: 'Only entries at or after this ISO 8601 date or timestamp.', helpValue: 'DATE'}),
  };

  async run() {
    const {flags} = await this.parse(Log);
    const result = log({knowledge: flags.knowledge, scenario: flags.scenario, limit: flags.limit, since: flags.since});
    return this.done(result, () =>
      result.entries.length === 0
        ? [`${result.scenario}: nothing in its history${flags.since !== undefined ? ` since ${flags.since}` : ''}`]
        : result.entries.map(
            (e) =>
              `${e.at}  ${e.type.padEnd(12)} ${short(e.from_digest)} -> ${short(e.to_digest)}  ` +
              `${e.rationale}${e.served ? SERVICE[e.served] : ''}`,
          ),
    );
  }
}
