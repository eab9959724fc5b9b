import {METRIC_NAMES} from '../../../model/evaluation/observations.js';
import type {ShownArm, ShownArtifact, SideBySide} from './side-by-side.js';
import {figure as fmt, type ArmObserved, type ObservedSummary} from './summary.js';

/**
 * The report's sections of what the evaluator observed: each arm's metrics
 * (median, p90 and mean), its checks, and the pairs shown side by side with
 * both arms' artifacts as escaped text. Markdown and HTML.
 */
const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!);
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(4)}`;

function metricCell(a: ArmObserved, name: (typeof METRIC_NAMES)[number]): string {
  const s = a.metrics[name];
  return s ? `${fmt(s.median)} / ${fmt(s.p90)} / ${fmt(s.mean)} (n ${s.n})` : '–';
}
function checksCell(a: ArmObserved): string {
  const n = a.checks.passed + a.checks.failed;
  return n === 0 ? '–' : `${a.checks.passed}/${n}`;
}
const check = (a: ShownArm) => (a.check_passed === null ? '–' : a.check_passed ? 'passed' : 'failed');
const heading = (p: SideBySide) =>
  `${p.fixture}, seed ${p.seed} (${p.lane}): difference ${signed(p.difference)}; ${p.reasons.join(', ')}`;
const note = (a: ShownArtifact) =>
  a.cut > 0 ? `(${a.cut} more characters in the artifact file ${a.digest})` : a.kept ? '' : (a.why ?? '');

/** A fence longer than any run of backticks in the text, so the text can never end the block. */
function fenced(text: string): string {
  let longest = 2;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${text}${text.endsWith('\n') ? '' : '\n'}${fence}`;
}

export function observedMarkdown(summary: ObservedSummary | null, pairs: readonly SideBySide[]): string[] {
  if (!summary) return [];
  const row = (arm: string, a: ArmObserved) =>
    `| ${arm} | ${METRIC_NAMES.map((m) => metricCell(a, m)).join(' | ')} | ${checksCell(a)} |`;
  const lines = [
    `Observed by the evaluator over ${summary.pairs} pairs (median / p90 / mean; ${summary.method}; ` +
      'descriptive, not part of the decision):',
    '',
    `| arm | ${METRIC_NAMES.join(' | ')} | checks passed |`,
    `| --- | ${METRIC_NAMES.map(() => '---:').join(' | ')} | ---: |`,
    row('candidate', summary.candidate),
    row('incumbent', summary.incumbent),
    '',
  ];
  if (pairs.length === 0) return lines;
  lines.push(
    '#### Side by side',
    '',
    'The pairs with the largest score difference, ' + 'and every pair whose check failed.',
  );
  for (const p of pairs) {
    lines.push('', `##### ${cell(heading(p))}`, '', '| | candidate | incumbent |', '| --- | --- | --- |');
    lines.push(`| score | ${p.candidate.score.toFixed(4)} | ${p.incumbent.score.toFixed(4)} |`);
    lines.push(`| check | ${check(p.candidate)} | ${check(p.incumbent)} |`);
    if (p.candidate.artifacts.length === 0) lines.push('', 'No artifacts were kept for this pair.');
    p.candidate.artifacts.forEach((_, i) => {
      for (const [arm, a] of [
        ['candidate', p.candidate.artifacts[i]!],
        ['incumbent', p.incumbent.artifacts[i]!],
      ] as const) {
        lines.push('', `**${a.name}** (${arm})${a.kept ? '' : `: ${note(a)}`}`);
        if (a.kept) lines.push('', fenced(a.text ?? ''), ...(a.cut > 0 ? ['', note(a)] : []));
      }
    });
  }
  lines.push('');
  return lines;
}

function artifactHtml(a: ShownArtifact): string {
  if (!a.kept) return `<p class="note">${escape(a.why ?? 'not kept')}</p>`;
  return `<pre>${escape(a.text ?? '')}</pre>${a.cut > 0 ? `<p class="note">${escape(note(a))}</p>` : ''}`;
}

export function observedHtml(summary: ObservedSummary | null, pairs: readonly SideBySide[]): string {
  if (!summary) return '';
  const row = (arm: string, a: ArmObserved) =>
    `<tr data-arm="${arm}"><td>${arm}</td>${METRIC_NAMES.map((m) => `<td>${metricCell(a, m)}</td>`).join('')}` +
    `<td>${checksCell(a)}</td></tr>`;
  const shown = pairs.map((p) => {
    const names = p.candidate.artifacts.map((a, i) => [a, p.incumbent.artifacts[i]!] as const);
    return (
      `<section class="pair" data-fixture="${escape(p.fixture)}" data-seed="${p.seed}">\n` +
      `<h3>${escape(heading(p))}</h3>\n<table class="side">` +
      '<tr><th></th><th>candidate</th><th>incumbent</th></tr>\n' +
      `<tr><td>score</td><td>${p.candidate.score.toFixed(4)}</td><td>${p.incumbent.score.toFixed(4)}</td></tr>\n` +
      `<tr><td>check</td><td>${check(p.candidate)}</td><td>${check(p.incumbent)}</td></tr>\n` +
      names
        .map(
          ([c, i]) =>
            `<tr data-artifact="${escape(c.name)}"><td>${escape(c.name)}</td><td>${artifactHtml(c)}</td>` +
            `<td>${artifactHtml(i)}</td></tr>`,
        )
        .join('\n') +
      `</table>\n${names.length === 0 ? '<p class="note">No artifacts were kept for this pair.</p>\n' : ''}</section>`
    );
  });
  return (
    `<h2>Observed by the evaluator</h2>
<table id="observed"><tr><th>arm</th>${METRIC_NAMES.map((m) => `<th>${m}</th>`).join('')}<th>checks passed</th></tr>
${row('candidate', summary.candidate)}
${row('incumbent', summary.incumbent)}
</table>
<p class="note">Median / p90 / mean over ${summary.pairs} pairs (${escape(summary.method)}); descriptive, ` +
    `not part of the decision.</p>
${
  pairs.length > 0
    ? `<h2>Side by side</h2>
<p class="note">The pairs with the largest score difference, and every pair whose check failed.</p>
<div id="side-by-side">
${shown.join('\n')}
</div>
`
    : ''
}`
  );
}
