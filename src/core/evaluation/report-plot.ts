import type {ReportData} from './report-data.js';

/**
 * The report's plot, one inline SVG: the lanes side by side (shaded, separated and named), each pair's
 * effect as a dot, each lane's running mean as a line through its dots, the decision's confidence
 * interval as a band, the minimum effect as a dashed line named in the right margin (never over a
 * mark), and axes whose ticks are round numbers.
 */
export const LANE_LABEL: Record<string, string> = {screen: 'screen', confirmation: 'confirmation', heldout: 'held-out'};
export const LANE_COLOUR: Record<string, string> = {screen: '#8a8a8a', confirmation: '#1f6feb', heldout: '#bf5700'};
const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!);

/** Ticks at multiples of 1, 2 or 5 × 10^k covering [lo, hi] in at most `target` steps, and their decimals. */
export function roundTicks(lo: number, hi: number, target = 5): {ticks: number[]; step: number; decimals: number} {
  const raw = (hi - lo) / target;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw * (1 - 1e-12))!;
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const first = Math.floor(lo / step + 1e-9);
  const last = Math.ceil(hi / step - 1e-9);
  const ticks: number[] = [];
  for (let k = first; k <= last; k++) ticks.push(Number((k * step).toFixed(decimals)));
  return {ticks, step, decimals};
}

/** The runs of consecutive pairs of one lane, in plot order (1-based pair numbers, inclusive). */
function laneRuns(d: ReportData): Array<{lane: string; from: number; to: number}> {
  const runs: Array<{lane: string; from: number; to: number}> = [];
  d.looks.forEach((l, i) => {
    const last = runs.at(-1);
    if (last && last.lane === l.lane) last.to = i + 1;
    else runs.push({lane: l.lane, from: i + 1, to: i + 1});
  });
  return runs;
}

const SHOWN = 1e300; // an interval the critical value made unbounded is drawn to the frame's edge
const f1 = (v: number) => v.toFixed(1);

export function intervalPlot(d: ReportData): string {
  const [width, height, left, right, top, bottom] = [720, 360, 56, 116, 52, 52];
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const n = Math.max(1, d.looks.length);
  const values = [
    d.policy.min_effect,
    ...d.effects.map((e) => e.effect),
    ...d.looks.flatMap((l) => [l.lane_mean, l.confidence_low, l.confidence_high]),
  ].filter((v): v is number => v !== null && Math.abs(v) < SHOWN);
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 1e-9) [lo, hi] = [lo - 0.5, hi + 0.5];
  const yTicks = roundTicks(lo, hi);
  const [yLo, yHi] = [yTicks.ticks[0]!, yTicks.ticks.at(-1)!];
  const clamp = (v: number) => Math.min(yHi, Math.max(yLo, v));
  const x = (pair: number) => left + ((pair - 0.5) / n) * plotW;
  const edge = (pair: number) => left + (pair / n) * plotW; // the right edge of a pair's slot
  const y = (v: number) => top + plotH - ((clamp(v) - yLo) / (yHi - yLo)) * plotH;
  const xStep = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000].find((s) => n / s <= 8) ?? 10000;
  const xTicks = [1, ...Array.from({length: Math.floor(n / xStep)}, (_, k) => (k + 1) * xStep)].filter(
    (p, i, all) => p <= n && all.indexOf(p) === i && (p === 1 || p - 1 >= xStep / 2),
  );
  const runs = laneRuns(d);
  // Lane names over their lanes; a name wider than its lane moves up a row rather than overlap its neighbour.
  const rowEnds = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  const laneLabels = runs.map((r) => {
    const label = LANE_LABEL[r.lane] ?? r.lane;
    const w = label.length * 7.5;
    const centre = Math.min(width - right - w / 2, Math.max(left + w / 2, (edge(r.from - 1) + edge(r.to)) / 2));
    const row = centre - w / 2 >= rowEnds[0]! + 6 ? 0 : 1;
    rowEnds[row] = centre + w / 2;
    return (
      `<text class="lane-label" data-lane="${r.lane}" x="${f1(centre)}" y="${top - 8 - row * 16}" ` +
      `text-anchor="middle">${label}</text>`
    );
  });
  const withBand = d.looks
    .map((l, i) => ({...l, pair: i + 1}))
    .filter((l) => l.confidence_low !== null && l.confidence_high !== null);
  const band =
    withBand.length > 0
      ? `M${withBand.map((l) => `${f1(x(l.pair))},${f1(y(l.confidence_high!))}`).join('L')}L${[...withBand]
          .reverse()
          .map((l) => `${f1(x(l.pair))},${f1(y(l.confidence_low!))}`)
          .join('L')}Z`
      : '';
  const meanLines = runs.map((r) => {
    const points = d.looks.slice(r.from - 1, r.to).map((l, k) => [x(r.from + k), y(l.lane_mean)] as const);
    // A lane of one pair still shows its mean: a short level stroke through the dot.
    const drawn =
      points.length > 1
        ? points
        : [[points[0]![0] - 4, points[0]![1]] as const, points[0]!, [points[0]![0] + 4, points[0]![1]] as const];
    return (
      `<path class="mean-line" data-lane="${r.lane}" d="M${drawn.map(([a, b]) => `${f1(a)},${f1(b)}`).join('L')}" ` +
      `fill="none" stroke="${LANE_COLOUR[r.lane]}" stroke-width="2"/>`
    );
  });
  const yMin = y(d.policy.min_effect);
  return [
    `<svg id="interval-plot" role="img" aria-label="each pair's effect and the confidence interval over the ` +
      `looks, by lane" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`,
    `<title>Each pair's effect by lane, each lane's running mean, and the confidence interval after each pair, ` +
      `against the minimum effect</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#fff"/>`,
    ...runs.map(
      (r, i) =>
        `<rect class="lane-area" data-lane="${r.lane}" x="${f1(edge(r.from - 1))}" y="${top}" ` +
        `width="${f1(edge(r.to) - edge(r.from - 1))}" height="${plotH}" fill="${i % 2 ? '#f6f8fa' : '#fff'}"/>`,
    ),
    ...yTicks.ticks.map(
      (t) =>
        `<line class="grid" x1="${left}" y1="${f1(y(t))}" x2="${width - right}" y2="${f1(y(t))}" ` +
        `stroke="#eaeef2"/>\n<text class="tick y-tick" x="${left - 6}" y="${f1(y(t))}" text-anchor="end" ` +
        `dominant-baseline="middle">${t.toFixed(yTicks.decimals)}</text>`,
    ),
    ...runs
      .slice(1)
      .map(
        (r) =>
          `<line class="lane-boundary" x1="${f1(edge(r.from - 1))}" y1="${top - 4}" x2="${f1(edge(r.from - 1))}" ` +
          `y2="${top + plotH}" stroke="#57606a" stroke-dasharray="2 3"/>`,
      ),
    ...laneLabels,
    `<line class="axis" x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" stroke="#999"/>`,
    `<line class="axis" x1="${left}" y1="${top + plotH}" x2="${width - right}" y2="${top + plotH}" stroke="#999"/>`,
    ...xTicks.map(
      (p) =>
        `<line class="x-tick-mark" x1="${f1(x(p))}" y1="${top + plotH}" x2="${f1(x(p))}" y2="${top + plotH + 5}" ` +
        `stroke="#999"/>\n<text class="tick x-tick" x="${f1(x(p))}" y="${top + plotH + 18}" ` +
        `text-anchor="middle">${p}</text>`,
    ),
    band ? `<path class="interval-band" d="${band}" fill="#1f6feb" fill-opacity="0.18" stroke="none"/>` : '',
    `<line class="min-effect" x1="${left}" y1="${f1(yMin)}" x2="${width - right}" y2="${f1(yMin)}" stroke="#d1242f" ` +
      `stroke-dasharray="6 4"/>`,
    `<text class="min-effect-label" x="${width - right + 6}" y="${f1(yMin)}" dominant-baseline="middle" ` +
      `fill="#d1242f">minimum effect ${d.policy.min_effect}</text>`,
    ...meanLines,
    ...d.effects.map(
      (e, i) =>
        `<circle class="fixture-effect" data-lane="${e.lane}" data-fixture="${escape(e.fixture)}" ` +
        `cx="${f1(x(i + 1))}" cy="${f1(y(e.effect))}" r="3.5" fill="${LANE_COLOUR[e.lane]}"><title>` +
        `${escape(`${LANE_LABEL[e.lane]} ${e.fixture} (seed ${e.seed}): ${e.effect.toFixed(4)}`)}</title></circle>`,
    ),
    `<text class="axis-label" x="${left}" y="16">effect (candidate score − incumbent score)</text>`,
    `<text class="axis-label" x="${left + plotW / 2}" y="${height - 10}" text-anchor="middle">pairs recorded ` +
      `(the looks), in plan order</text>`,
    '</svg>',
  ].join('\n');
}
