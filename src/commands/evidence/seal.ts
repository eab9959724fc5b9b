import * as Flags from '@oclif/core/flags';
import {WritingCommand} from '../../cli/base-command.js';
import {paint} from '../../cli/style.js';
import {evidenceSeal} from '../../core/inspection/evidence.js';

export default class EvidenceSeal extends WritingCommand {
  static override summary =
    'Seal what a model was actually given, as a delivery evidence package (per machine, never committed).';
  static override description =
    'Reads {"schema": "autoctx.evidence-package.v1", "scenario", "correlation_id", "bundle_digest", ' +
    '"release_version"?, "layout"?, "system_prompt", "user_prompt", "metadata"?} ' +
    '(schemas/evidence-package.schema.json). A bootstrap package (layout autoctx-bootstrap-v1) is ' +
    'inspected PASS only against the receipt that names its items: carry it as metadata.receipt ' +
    '{package_digest, items} (as bootstrap render and prepare print them), or use its receipt id as the ' +
    'correlation id. Every delivery is sealed for 1,000 deliveries after the bundle active.json names ' +
    'changes, then 1% by stable hash of the correlation id. Answers sealed or not_sampled (both exit 0). ' +
    'Packages may hold personal data: they stay in knowledge/.state/ (files 0600) and are never ' +
    'committed.';
  static override examples = ['<%= config.bin %> evidence seal --from delivery.json --json'];
  static override flags = {
    from: Flags.string({summary: 'The package file (JSON), or - for stdin.', helpValue: 'FILE', required: true}),
  };

  async run() {
    const {flags} = await this.parse(EvidenceSeal);
    const result = await evidenceSeal({
      knowledge: flags.knowledge,
      from: flags.from,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      result.status === 'sealed'
        ? `${paint.green('sealed')} ${result.package_id} (${result.reason}, delivery ${result.since_change} ` +
          `since the active bundle changed)`
        : `not sampled (delivery ${result.since_change} since the active bundle changed)`,
    ]);
  }
}
