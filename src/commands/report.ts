import * as Flags from '@oclif/core/flags';
import {ScenarioCommand} from '../cli/base-command.js';
import {digestArg} from '../cli/flags.js';
import {AutoctxError} from '../errors.js';
import {reportData, writeReport} from '../core/evaluation/report.js';
import {reportHtml, reportMarkdown} from '../core/evaluation/report-render.js';

export default class Report extends ScenarioCommand {
  static override summary =
    "Write a report of a candidate's comparison: Markdown for a pull request or a CI summary, and a " +
    'self-contained HTML page with a plot.';
  static override description =
    'With --out DIR, writes report-<digest>.md and report-<digest>.html there. With --format md or html, ' +
    "prints that one to stdout (for $GITHUB_STEP_SUMMARY, say). The plot shows each pair's effect in its " +
    "lane, each lane's running mean, and the confidence interval after each pair against the minimum effect. " +
    "Each arm's mean score is shown with a 95% Student-t interval per arm; it and the summaries by lane are " +
    'descriptive and never part of a decision. When the evaluator observed metrics (latency, tokens, cost) ' +
    "or kept artifacts, each arm's median, p90 and mean are shown, and the 5 pairs with the largest score " +
    "difference and every pair whose check failed side by side, with both arms' artifacts.";
  static override examples = [
    '<%= config.bin %> report 6d9bc734 --out reports/',
    '<%= config.bin %> report 6d9bc734 --format md >> "$GITHUB_STEP_SUMMARY"',
  ];
  static override args = {candidate: digestArg('the candidate', 'Candidate bundle digest or a unique prefix.')};
  static override flags = {
    out: Flags.string({
      summary: 'Folder to write report-<digest>.md and report-<digest>.html into (created when missing).',
      helpValue: 'DIR',
    }),
    artifacts: Flags.string({
      summary:
        'Folder the evaluator kept trial artifacts in, when screen or confirm named one with --artifacts ' +
        '(default knowledge/.state/artifacts).',
      helpValue: 'DIR',
    }),
    format: Flags.string({
      summary: 'Print one format to stdout instead: md or html.',
      options: ['md', 'html'],
      helpValue: 'FORMAT',
    }),
  };

  async run() {
    const {args, flags} = await this.parse(Report);
    if ((flags.out === undefined) === (flags.format === undefined))
      throw new AutoctxError('USAGE', 'give either --out DIR (both files) or --format md|html (one, to stdout)');
    if (flags.format !== undefined) {
      if (this.jsonEnabled())
        throw new AutoctxError(
          'USAGE',
          '--format prints the report itself on stdout, which --json needs for the result; use --out',
        );
      const data = reportData({
        knowledge: flags.knowledge,
        scenario: flags.scenario,
        candidate: args.candidate,
        artifacts: flags.artifacts,
      });
      process.stdout.write(flags.format === 'md' ? reportMarkdown(data) : reportHtml(data));
      return;
    }
    const r = writeReport({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      candidate: args.candidate,
      out: flags.out!,
      artifacts: flags.artifacts,
    });
    return this.done(r, () => [`wrote ${r.markdown} and ${r.html}`]);
  }
}
