import {WritingCommand} from '../../cli/base-command.js';
import {integerFlag} from '../../cli/flags.js';
import {paint} from '../../cli/style.js';
import {inspectRun} from '../../core/inspection/inspect.js';

export default class InspectRun extends WritingCommand {
  static override summary = 'Inspect the oldest uninspected evidence packages against the bundles they claim.';
  static override description =
    'Under one lock: up to --batch packages (default 50) not yet inspected by this inspector version, ' +
    'oldest first; a concurrent run waits, and no package is inspected twice. A bootstrap package must ' +
    'be, byte for byte, the framing autoctx writes and the items its receipt names, each matching its ' +
    'source; a components package must hold each present component verbatim. Verdicts: PASS, FAIL (a ' +
    'mismatch), INCOMPLETE (something unverifiable), NOT_APPLICABLE (an unknown layout), ERROR (the ' +
    'package or its bundle does not read back). The inspector never changes a prompt, a decision or a ' +
    'rule.';
  static override examples = ['<%= config.bin %> inspect run', '<%= config.bin %> inspect run --batch 500 --json'];
  static override flags = {
    batch: integerFlag('batch', {summary: 'At most this many packages (default 50).', min: 1, max: 100_000}),
    'sample-percent': integerFlag('sample-percent', {
      summary: 'Inspect this share of packages, by stable hash of the package id (default 100).',
      min: 1,
      max: 100,
    }),
  };

  async run() {
    const {flags} = await this.parse(InspectRun);
    const result = await inspectRun({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      batch: flags.batch,
      samplePercent: flags['sample-percent'],
      lockTimeout: flags['lock-timeout'],
    });
    const paintOf = (v: string) => (v === 'PASS' ? paint.green(v) : v === 'FAIL' || v === 'ERROR' ? paint.red(v) : v);
    return this.done(result, () => [
      `${result.inspector_version}: inspected ${result.inspected.length} package(s) of ${result.scenario}; ` +
        `${result.remaining} waiting`,
      ...result.inspected.map((i) => `  ${i.package_id}  ${paintOf(i.verdict)}`),
    ]);
  }
}
