import {status} from '../core/status.js';
import {ScenarioCommand} from '../cli/base-command.js';
import {paint, short} from '../cli/style.js';

export default class Status extends ScenarioCommand {
  static override summary = 'Show the active bundle and the candidates of each scenario.';
  static override examples = ['<%= config.bin %> status', '<%= config.bin %> status --scenario support --json'];

  async run() {
    const {flags} = await this.parse(Status);
    const result = status({knowledge: flags.knowledge, scenario: flags.scenario});
    return this.done(result, () =>
      result.scenarios.length === 0
        ? ['no scenarios yet; run autoctx init --scenario S --from SRC']
        : result.scenarios.flatMap((s) => [
            `${paint.bold(s.scenario)}: ${s.active ? `active ${short(s.active.bundle_digest)} (epoch ${s.active.evaluator_epoch}, rollback target ${short(s.active.rollback_target_digest)})` : paint.yellow('no active bundle')}`,
            ...Object.entries(s.candidates).map(([lifecycle, digests]) => `  ${lifecycle.padEnd(10)} ${digests.map(short).join(' ')}`),
          ]),
    );
  }
}
