import type {ReportData} from './report-data.js';
import {intervalPlot, LANE_COLOUR, LANE_LABEL} from './report-plot.js';
import {observedHtml, observedMarkdown} from './observed/render.js';

/**
 * A report of one candidate's comparison, for people: Markdown that fits a
 * pull-request comment or a CI job summary, and one self-contained HTML file
 * (inline SVG and CSS, no script, nothing fetched) with a plot of the
 * confidence interval over the looks against the minimum effect, and each
 * pair's effect by lane (report-plot.ts).
 */
const num = (x: number | null | undefined, digits = 4) => (x === null || x === undefined ? '–' : x.toFixed(digits));
const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!);
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * Where the candidate stands, in words: the lifecycle alone misleads (a terminal inconclusive is
 * recorded with the lifecycle rejected, as the reference records it).
 */
export function standing(d: Pick<ReportData, 'lifecycle' | 'comparison'>): string {
  const decision = d.comparison.decision;
  switch (d.lifecycle) {
    case 'rejected':
      if (decision === 'inconclusive')
        return 'closed as inconclusive: neither shown better nor worse within its budget; it will not be promoted';
      if (decision === 'confirmed')
        return (
          'closed after confirmation without promotion (a campaign gate or a stale parent); ' +
          'it will not be promoted'
        );
      return 'rejected: it will not be promoted';
    case 'confirmed':
      return 'confirmed: it can be promoted';
    case 'active':
      return 'serving: the active bundle';
    case 'superseded':
      return 'served, since replaced';
    case 'screened':
      return 'screened: its evaluation is not finished';
    default:
      return `${d.lifecycle}: its evaluation is not finished`;
  }
}

const interval = (lo: number | null, hi: number | null) => (lo === null ? '–' : `[${num(lo)}, ${num(hi)}]`);

/** Each arm's absolute mean score and its interval, as rows: [arm, digest, pairs, mean, interval]. */
function armRows(d: ReportData): string[][] {
  if (!d.arms) return [];
  return [
    ['candidate', d.candidate_digest.slice(0, 12), d.arms.candidate],
    ['incumbent', d.parent_digest.slice(0, 12), d.arms.incumbent],
  ].map(([arm, digest, a]) => {
    const s = a as NonNullable<ReportData['arms']>['candidate'];
    return [arm as string, digest as string, String(s.n), num(s.mean), interval(s.low, s.high)];
  });
}

export function reportMarkdown(d: ReportData): string {
  const c = d.comparison;
  const lines = [
    `### autoctx: candidate \`${d.candidate_digest.slice(0, 12)}\` against ` +
      `\`${d.parent_digest.slice(0, 12)}\` (${d.scenario})`,
    '',
    `**${c.decision}**: ${cell(c.reason)}. The candidate is ${standing(d)}.`,
    '',
    '| | |',
    '| --- | --- |',
    `| mean effect | ${num(c.mean_effect)} |`,
    `| confidence interval | ` +
      `${c.confidence_low === null ? '–' : `[${num(c.confidence_low)}, ${num(c.confidence_high)}]`} (z ` +
      `${d.policy.confidence_z}) |`,
    `| minimum effect | ${d.policy.min_effect} |`,
    `| pairs | screen ${c.screen_pairs}, confirmation ${c.confirmation_pairs}, held-out ${c.heldout_pairs} |`,
    '',
    ...(d.arms
      ? [
          `Scores of each arm (${d.arms.method}; not part of the decision):`,
          '',
          '| arm | bundle | pairs | mean score | 95% interval |',
          '| --- | --- | ---: | ---: | --- |',
          ...armRows(d).map(([arm, digest, n, mean, iv]) => `| ${arm} | \`${digest}\` | ${n} | ${mean} | ${iv} |`),
          '',
        ]
      : []),
    ...observedMarkdown(d.observed, d.side_by_side),
    'Effects (candidate minus incumbent) by lane, described (not part of the decision):',
    '',
    '| lane | pairs | mean | median | quartiles | sd | range |',
    '| --- | ---: | ---: | ---: | --- | ---: | --- |',
    ...d.summaries.map(
      (s) =>
        `| ${LANE_LABEL[s.lane]} | ${s.n} | ${num(s.mean)} | ${num(s.median)} | ${num(s.q1)} – ` +
        `${num(s.q3)} | ${num(s.sd)} | ${num(s.min)} – ${num(s.max)} |`,
    ),
    '',
    `<sub>Replay it: \`autoctx replay ${d.candidate_digest.slice(0, 12)}\` · full digest ${d.candidate_digest}</sub>`,
    '',
  ];
  return lines.join('\n');
}

export function reportHtml(d: ReportData): string {
  const c = d.comparison;
  const rows = d.summaries.map(
    (s) =>
      `<tr data-lane="${s.lane}"><td><span class="swatch" ` +
      `style="background:${LANE_COLOUR[s.lane]}"></span>${LANE_LABEL[s.lane]}</td><td>${s.n}</td><td>` +
      `${num(s.mean)}</td><td>${num(s.median)}</td><td>${num(s.q1)} – ` +
      `${num(s.q3)}</td><td>${num(s.sd)}</td><td>${num(s.min)} – ${num(s.max)}</td></tr>`,
  );
  return (
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>autoctx report: ${escape(d.candidate_digest.slice(0, 12))}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 760px; color: #1f2328; }
h1 { font-size: 1.3rem; } code { font: 13px ui-monospace, monospace; }
.decision { font-size: 1.1rem; } .decision b { text-transform: uppercase; }
table { border-collapse: collapse; margin: 1rem 0; } td, th { padding: 4px 10px; border-bottom: 1px ` +
    `solid #ddd; text-align: right; } td:first-child, th:first-child { text-align: left; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 6px; }
svg text { font: 12px system-ui, sans-serif; fill: #57606a; }
.note { color: #57606a; font-size: 13px; }
pre { white-space: pre-wrap; word-break: break-word; max-height: 30em; overflow: auto; margin: 0; text-align: left; ` +
    `font: 12px ui-monospace, monospace; }
table.side td { vertical-align: top; text-align: left; } table.side { width: 100%; table-layout: fixed; }
</style>
</head>
<body>
<h1>Candidate <code>${escape(d.candidate_digest.slice(0, 12))}</code> against ` +
    `<code>${escape(d.parent_digest.slice(0, 12))}</code> <span ` +
    `class="note">(${escape(d.scenario)})</span></h1>
<p class="decision" id="decision"><b>${escape(c.decision)}</b>: ${escape(c.reason)}.</p>
<p id="standing">The candidate is ${escape(standing(d))}.</p>
<table id="comparison">
<tr><td>mean effect</td><td>${num(c.mean_effect)}</td></tr>
<tr><td>confidence interval</td><td>` +
    `${c.confidence_low === null ? '–' : `[${num(c.confidence_low)}, ${num(c.confidence_high)}]`} (z ` +
    `${d.policy.confidence_z})</td></tr>
<tr><td>minimum effect</td><td>${d.policy.min_effect}</td></tr>
<tr><td>pairs</td><td>screen ${c.screen_pairs}, confirmation ${c.confirmation_pairs}, held-out ` +
    `${c.heldout_pairs}</td></tr>
</table>
${
  d.arms
    ? `<h2>Scores of each arm</h2>
<table id="arms"><tr><th>arm</th><th>bundle</th><th>pairs</th><th>mean score</th><th>95% interval</th></tr>
${armRows(d)
  .map(
    ([arm, digest, n, mean, iv]) =>
      `<tr data-arm="${arm}"><td>${arm}</td><td><code>${digest}</code></td><td>${n}</td><td>${mean}</td>` +
      `<td>${iv}</td></tr>`,
  )
  .join('\n')}
</table>
<p class="note">${escape(d.arms.method)}: descriptive, not part of the decision.</p>
`
    : ''
}<h2>The interval over the looks</h2>
${intervalPlot(d)}
<p class="note">The dots are each pair's effect, coloured by lane; each lane's line is the mean of its ` +
    `effects so far; the band is the decision's confidence interval (of the confirmation lane) once it ` +
    `has one; the dashed line is the minimum effect the interval must clear.</p>
<h2>Effects by lane</h2>
<table id="summaries"><tr><th>lane</th><th>pairs</th><th>mean</th><th>median</th><th>quartiles</th><` +
    `th>sd</th><th>range</th></tr>
${rows.join('\n')}
</table>
<p class="note">Descriptive only (simple-statistics); the decision is the recorded comparison, ` +
    `which <code>autoctx replay ${escape(d.candidate_digest.slice(0, 12))}</code> reproduces from the ` +
    `evidence. Full digest ${escape(d.candidate_digest)}.</p>
${observedHtml(d.observed, d.side_by_side)}</body>
</html>
`
  );
}
