import type {ReportData} from './report-data.js';

/**
 * A report of one candidate's comparison, for people: Markdown that fits a
 * pull-request comment or a CI job summary, and one self-contained HTML file
 * (inline SVG and CSS, no script, nothing fetched) with a plot of the
 * confidence interval over the looks against the minimum effect, and each
 * pair's effect by lane.
 */
const LANE_LABEL: Record<string, string> = {screen: 'screen', confirmation: 'confirmation', heldout: 'held-out'};
const LANE_COLOUR: Record<string, string> = {screen: '#8a8a8a', confirmation: '#1f6feb', heldout: '#bf5700'};
const num = (x: number | null | undefined, digits = 4) => (x === null || x === undefined ? '–' : x.toFixed(digits));
const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!);
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function reportMarkdown(d: ReportData): string {
  const c = d.comparison;
  const lines = [
    `### autoctx: candidate \`${d.candidate_digest.slice(0, 12)}\` against ` +
      `\`${d.parent_digest.slice(0, 12)}\` (${d.scenario})`,
    '',
    `**${c.decision}**, lifecycle \`${d.lifecycle}\`: ${cell(c.reason)}`,
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

/** The plot's frame: x over the pairs, y over every value shown (the band, the effects, the minimum effect). */
function scales(d: ReportData, width: number, height: number, pad: number) {
  const ys = [
    d.policy.min_effect,
    ...d.effects.map((e) => e.effect),
    ...d.looks.flatMap((l) =>
      [l.mean_effect, l.confidence_low, l.confidence_high].filter((v): v is number => v !== null),
    ),
  ];
  let lo = Math.min(...ys);
  let hi = Math.max(...ys);
  if (hi - lo < 1e-9) [lo, hi] = [lo - 1, hi + 1];
  const margin = (hi - lo) * 0.08;
  lo -= margin;
  hi += margin;
  const n = Math.max(1, d.looks.length);
  return {
    x: (i: number) => pad + ((i - 1) / Math.max(1, n - 1)) * (width - 2 * pad),
    y: (v: number) => height - pad - ((v - lo) / (hi - lo)) * (height - 2 * pad),
    lo,
    hi,
  };
}

function intervalPlot(d: ReportData): string {
  const [width, height, pad] = [720, 320, 44];
  const s = scales(d, width, height, pad);
  const withBand = d.looks.filter((l) => l.confidence_low !== null && l.confidence_high !== null);
  const band =
    withBand.length > 0
      ? `M${withBand.map((l) => `${s.x(l.pairs).toFixed(1)},${s.y(l.confidence_high!).toFixed(1)}`).join('L')}L${[
          ...withBand,
        ]
          .reverse()
          .map((l) => `${s.x(l.pairs).toFixed(1)},${s.y(l.confidence_low!).toFixed(1)}`)
          .join('L')}Z`
      : '';
  const means = d.looks.filter((l) => l.mean_effect !== null);
  const meanPath =
    means.length > 0
      ? `M${means.map((l) => `${s.x(l.pairs).toFixed(1)},${s.y(l.mean_effect!).toFixed(1)}`).join('L')}`
      : '';
  const ticks = [s.lo, (s.lo + s.hi) / 2, s.hi];
  return [
    `<svg id="interval-plot" role="img" aria-label="confidence interval over the looks" viewBox="0 0 ` +
      `${width} ${height}" width="${width}" height="${height}">`,
    `<title>The mean effect and its confidence interval after each pair, against the minimum effect</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#fff"/>`,
    ...ticks.map(
      (t) =>
        `<text class="tick" x="${pad - 6}" y="${s.y(t).toFixed(1)}" text-anchor="end" ` +
        `dominant-baseline="middle">${num(t, 2)}</text>`,
    ),
    `<line class="axis" x1="${pad}" y1="${height - pad}" x2="${width - pad}" y2="${height - pad}" stroke="#999"/>`,
    band ? `<path class="interval-band" d="${band}" fill="#1f6feb" fill-opacity="0.18" stroke="none"/>` : '',
    meanPath ? `<path class="mean-line" d="${meanPath}" fill="none" stroke="#1f6feb" stroke-width="2"/>` : '',
    `<line class="min-effect" x1="${pad}" y1="${s.y(d.policy.min_effect).toFixed(1)}" ` +
      `x2="${width - pad}" y2="${s.y(d.policy.min_effect).toFixed(1)}" stroke="#d1242f" ` +
      `stroke-dasharray="6 4"/>`,
    `<text class="min-effect-label" x="${width - pad}" y="${(s.y(d.policy.min_effect) - 6).toFixed(1)}" ` +
      `text-anchor="end">minimum effect ${d.policy.min_effect}</text>`,
    ...d.effects.map(
      (e, i) =>
        `<circle class="fixture-effect" data-lane="${e.lane}" data-fixture="${escape(e.fixture)}" ` +
        `cx="${s.x(i + 1).toFixed(1)}" cy="${s.y(e.effect).toFixed(1)}" r="3.5" ` +
        `fill="${LANE_COLOUR[e.lane]}"><title>` +
        `${escape(`${LANE_LABEL[e.lane]} ${e.fixture} (seed ${e.seed}): ${num(e.effect)}`)}</title></circle` +
        `>`,
    ),
    `<text class="axis-label" x="${width / 2}" y="${height - 10}" text-anchor="middle">pairs recorded ` +
      `(the looks), in plan order</text>`,
    '</svg>',
  ].join('\n');
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
</style>
</head>
<body>
<h1>Candidate <code>${escape(d.candidate_digest.slice(0, 12))}</code> against ` +
    `<code>${escape(d.parent_digest.slice(0, 12))}</code> <span ` +
    `class="note">(${escape(d.scenario)})</span></h1>
<p class="decision" id="decision"><b>${escape(c.decision)}</b>: ${escape(c.reason)} <span ` +
    `class="note">(lifecycle ${escape(d.lifecycle)})</span></p>
<table id="comparison">
<tr><td>mean effect</td><td>${num(c.mean_effect)}</td></tr>
<tr><td>confidence interval</td><td>` +
    `${c.confidence_low === null ? '–' : `[${num(c.confidence_low)}, ${num(c.confidence_high)}]`} (z ` +
    `${d.policy.confidence_z})</td></tr>
<tr><td>minimum effect</td><td>${d.policy.min_effect}</td></tr>
<tr><td>pairs</td><td>screen ${c.screen_pairs}, confirmation ${c.confirmation_pairs}, held-out ` +
    `${c.heldout_pairs}</td></tr>
</table>
<h2>The interval over the looks</h2>
${intervalPlot(d)}
<p class="note">The line is the mean effect after each pair, the band its confidence interval once ` +
    `the confirmation lane has one, the dashed line the minimum effect the interval must clear; the dots ` +
    `are each pair's effect, coloured by lane.</p>
<h2>Effects by lane</h2>
<table id="summaries"><tr><th>lane</th><th>pairs</th><th>mean</th><th>median</th><th>quartiles</th><` +
    `th>sd</th><th>range</th></tr>
${rows.join('\n')}
</table>
<p class="note">Descriptive only (simple-statistics); the decision is the recorded comparison, ` +
    `which <code>autoctx replay ${escape(d.candidate_digest.slice(0, 12))}</code> reproduces from the ` +
    `evidence. Full digest ${escape(d.candidate_digest)}.</p>
</body>
</html>
`
  );
}
