import * as Args from '@oclif/core/args';
import {ScenarioCommand} from '../../cli/base-command.js';
import {inspectShow} from '../../core/inspection/inspect.js';

export default class InspectShow extends ScenarioCommand {
  static override summary = 'Show the latest inspection of one evidence package.';
  static override examples = ['<%= config.bin %> inspect show 0f3c… --json'];
  static override args = {package: Args.string({description: 'The package id (32 hex characters).', required: true})};

  async run() {
    const {args, flags} = await this.parse(InspectShow);
    const result = inspectShow({knowledge: flags.knowledge, scenario: flags.scenario, packageId: args.package});
    const i = result.inspection;
    return this.done(result, () =>
      i === null
        ? [`${result.package_id}: not inspected yet (autoctx inspect run)`]
        : [
            `${result.package_id}  ${i.verdict}  ${i.inspector_version} against ${i.checked_against}: ` +
              `${i.matched} matched, ${i.mismatched} mismatched, ${i.unverifiable} unverifiable`,
            ...i.findings.map((f) => `  ${f.code} ${f.check} ${f.subject}: ${f.detail}`),
          ],
    );
  }
}
