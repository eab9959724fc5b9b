import * as Args from '@oclif/core/args';
import {ScenarioCommand} from '../../cli/base-command.js';
import {short} from '../../cli/style.js';
import {releaseShow} from '../../core/release/release-query.js';

export default class ReleaseShow extends ScenarioCommand {
  static override summary = 'Show a release: its descriptor, checked on read, and its state in each scope.';
  static override examples = [
    '<%= config.bin %> release show v20',
    '<%= config.bin %> release show v20 --json | jq .descriptor.rollback_targets',
  ];
  static override args = {version: Args.string({description: 'The release name (any case).', required: true})};

  async run() {
    const {args, flags} = await this.parse(ReleaseShow);
    const result = releaseShow({knowledge: flags.knowledge, scenario: flags.scenario, version: args.version});
    const d = result.descriptor;
    return this.done(result, () => [
      `${d.version}  bundle ${short(d.bundle_digest)}  named ${d.created_at} by ${d.actor}`,
      `  parent ${d.parent_version ?? '-'}; rollback targets ${d.rollback_targets.join(', ') || '-'} ` +
        `(${d.rollback_scope})`,
      `  vocabulary ${d.vocabulary_version ?? '-'}` +
        `${d.compatible_vocabularies.length ? ` (also ${d.compatible_vocabularies.join(', ')})` : ''}; model ` +
        `profiles ${d.model_profiles.join(', ') || '-'}`,
      ...d.golden_inputs.map((g) => `  golden input ${g.name}  ${g.bytes} bytes  ${short(g.sha256)}`),
      ...result.states.map((s) => `  ${s.scope}: ${s.state}`),
    ]);
  }
}
