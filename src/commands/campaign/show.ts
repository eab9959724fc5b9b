import * as Args from '@oclif/core/args';
import {showCampaign} from '../../core/evaluation/campaign.js';
import {ScenarioCommand} from '../../cli/base-command.js';
import {paint, short} from '../../cli/style.js';

export default class CampaignShow extends ScenarioCommand {
  static override summary = "Show a campaign: its policy, each candidate's alpha and status, and the alpha left.";
  static override examples = ['<%= config.bin %> campaign show nightly-2026-11'];
  static override args = {id: Args.string({description: 'Campaign id.', required: true})};

  async run() {
    const {args, flags} = await this.parse(CampaignShow);
    const r = showCampaign({knowledge: flags.knowledge, scenario: flags.scenario, campaign: args.id});
    return this.done(r, () => [
      `${paint.bold(r.campaign_id)}: familywise alpha ${r.policy.familywise_alpha}, decay ` +
        `${r.policy.allocation_decay}, method ${r.policy.robust_method}`,
      `  allocated ${r.alpha_allocated.toPrecision(6)}, left ` +
        `${r.alpha_left.toPrecision(6)}` +
        `${r.fixture_history_complete ? '' : paint.yellow(' (legacy ledger: no new candidates)')}`,
      ...r.candidates.map(
        (c) =>
          `  #${c.candidate_index} ${short(c.candidate_digest)}  alpha ${c.allocated_alpha.toPrecision(4)} ` +
          ` z ${c.required_confidence_z}  ${c.status}${c.reason ? `: ${c.reason}` : ''}`,
      ),
    ]);
  }
}
