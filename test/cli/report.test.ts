/// <reference lib="dom" />
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import type {Browser} from 'puppeteer-core';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {launchBrowser} from '../helpers/browser.js';
import {runCliProcess} from '../helpers/cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {treeHash} from '../helpers/tree.js';

// autoctx report writes Markdown (a PR comment, a CI summary) and a self-contained HTML page
// whose plot is checked in a real headless browser (test/helpers/browser.ts), driven by puppeteer-core.

let t: Tree;
let c: string;
let browser: Browser;
beforeAll(async () => {
  t = makeTree();
  c = t.propose('c', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir, {FAKE_NOISE: '0.05'})).json.status).toBe('confirmed');
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  fs.rmSync(t.dir, {recursive: true, force: true});
});

describe('autoctx report', () => {
  it(
    'writes both files, reads and changes nothing in the tree, ' +
      'and the Markdown carries the decision and the summaries',
    () => {
      const out = path.join(t.dir, 'reports');
      fs.mkdirSync(out);
      const before = treeHash(t.knowledge);
      const r = runCliProcess(['report', c, '--out', out, '--knowledge', t.knowledge, '--json']);
      expect(r.status).toBe(0);
      expect(resultSchemaProblem('result-report', r.json)).toBeNull();
      expect(treeHash(t.knowledge)).toBe(before);
      const record = JSON.parse(fs.readFileSync(t.file(`candidates/${c}/record.json`), 'utf8'));
      const md = fs.readFileSync(r.json.markdown, 'utf8');
      expect(md).toContain(
        `**confirmed**: ${record.comparison.reason}. The candidate is confirmed: it can be promoted.`,
      );
      expect(md).toContain(`| mean effect | ${record.comparison.mean_effect.toFixed(4)} |`);
      expect(md).toMatch(/^\| confirmation \| \d+ \|/m);
      expect(runCliProcess(['report', c, '--format', 'md', '--knowledge', t.knowledge]).stdout).toBe(md);
    },
  );

  it('the HTML, in headless Chromium: one self-contained page with the ' +
    "interval band, the minimum effect and every pair's effect by lane", async () => {
    const html = path.join(t.dir, 'report.html');
    fs.writeFileSync(html, runCliProcess(['report', c, '--format', 'html', '--knowledge', t.knowledge]).stdout);
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (q) => requests.push(q.url()));
    await page.goto(`file://${html}`, {waitUntil: 'load'});
    expect(requests).toEqual([`file://${html}`]); // nothing fetched: self-contained
    const facts = await page.evaluate(() => {
      const svg = document.querySelector('svg#interval-plot') as SVGSVGElement;
      const box = (sel: string) => (document.querySelector(sel) as SVGGraphicsElement | null)?.getBBox();
      const dots = [...document.querySelectorAll('circle.fixture-effect')] as SVGCircleElement[];
      return {
        svg: !!svg && svg.getBoundingClientRect().width > 600,
        band: box('path.interval-band')?.width ?? 0,
        mean: box('path.mean-line')?.width ?? 0,
        minEffect: (document.querySelector('line.min-effect') as SVGLineElement | null)?.getAttribute('y1'),
        minLabel: document.querySelector('text.min-effect-label')?.textContent,
        lanes: dots.map((d) => d.dataset.lane),
        insidePlot: dots.every((d) => Number(d.getAttribute('cy')) > 0 && Number(d.getAttribute('cy')) < 360),
        decision: document.querySelector('#decision')?.textContent,
        scripts: document.querySelectorAll('script').length,
      };
    });
    const trials = JSON.parse(fs.readFileSync(t.file(`candidates/${c}/matched_trials.json`), 'utf8')).trials as Array<{
      lane: string;
    }>;
    expect(facts.svg).toBe(true);
    expect(facts.band).toBeGreaterThan(0);
    expect(facts.mean).toBeGreaterThan(0);
    expect(facts.minEffect).toMatch(/^\d+(\.\d+)?$/);
    expect(facts.minLabel).toBe('minimum effect 0');
    expect([...facts.lanes].sort()).toEqual(trials.map((x) => x.lane).sort());
    expect(new Set(facts.lanes)).toEqual(new Set(['screen', 'confirmation', 'heldout']));
    expect(facts.insidePlot).toBe(true);
    expect(facts.decision).toMatch(/^confirmed: /);
    expect(facts.scripts).toBe(0);
    const shot = path.join(t.dir, 'report.png');
    await page.screenshot({path: shot, fullPage: true});
    const png = fs.readFileSync(shot);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.length).toBeGreaterThan(10_000);
    await page.close();
  }, 60_000);

  /** What a reader sees of the plot, rendered in headless Chromium: boxes and coordinates of what is drawn. */
  async function seenPlot() {
    const html = path.join(t.dir, 'seen.html');
    fs.writeFileSync(html, runCliProcess(['report', c, '--format', 'html', '--knowledge', t.knowledge]).stdout);
    const page = await browser.newPage();
    await page.setViewport({width: 900, height: 1400});
    await page.goto(`file://${html}`, {waitUntil: 'load'});
    const seen = await page.evaluate(() => {
      const rect = (e: Element) => {
        const r = e.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height};
      };
      const svg = document.querySelector('svg#interval-plot')!;
      const inSvg = (sel: string) => [...svg.querySelectorAll(sel)];
      // Every label drawn in the plot, whatever its class, and what it says.
      const labels = inSvg('text').map((e) => ({text: e.textContent ?? '', cls: e.getAttribute('class'), ...rect(e)}));
      const dots = (inSvg('circle') as SVGCircleElement[]).map((e) => ({
        lane: e.dataset.lane!,
        cx: e.cx.baseVal.value,
        cy: e.cy.baseVal.value,
        ...rect(e),
      }));
      // The lines drawn through the dots: each path's vertices, in the SVG's own coordinates.
      const lines = (inSvg('path') as SVGPathElement[])
        .filter((e) => e.getAttribute('fill') === 'none')
        .map((e) => ({
          lane: e.dataset.lane ?? null,
          points: [...(e.getAttribute('d') ?? '').matchAll(/(-?[\d.]+),(-?[\d.]+)/g)].map((m) => [
            Number(m[1]),
            Number(m[2]),
          ]),
          ...rect(e),
        }));
      const verticals = (inSvg('line') as SVGLineElement[])
        .filter((e) => e.x1.baseVal.value === e.x2.baseVal.value && e.y2.baseVal.value - e.y1.baseVal.value > 100)
        .map((e) => e.x1.baseVal.value);
      const svgBox = svg.getBoundingClientRect();
      return {labels, dots, lines, verticals, svgLeft: svgBox.left, svgTop: svgBox.top};
    });
    await page.screenshot({path: path.join(t.dir, 'seen.png'), fullPage: true});
    await page.close();
    return seen;
  }
  const numeric = (l: {text: string}) => /^-?\d+(\.\d+)?$/.test(l.text.trim());
  const near = (a: number, b: number, eps: number) => Math.abs(a - b) <= eps;
  /** The numeric labels left of every dot: the y axis's ticks. */
  const yTicksOf = (seen: Awaited<ReturnType<typeof seenPlot>>) =>
    seen.labels.filter((l) => numeric(l) && l.right < Math.min(...seen.dots.map((d) => d.left)));
  /** The dots' runs of one lane, in plot order. */
  const runsOf = (seen: Awaited<ReturnType<typeof seenPlot>>) => {
    const runs: Array<{lane: string; from: number; to: number}> = [];
    seen.dots.forEach((d, i) => {
      if (runs.at(-1)?.lane === d.lane) runs.at(-1)!.to = i;
      else runs.push({lane: d.lane, from: i, to: i});
    });
    return runs;
  };

  it('the plot, in headless Chromium: the y axis is labelled at a round step (1, 2 or 5 × 10^k), the x axis with ' +
    'whole pair numbers under their dots', async () => {
    const seen = await seenPlot();
    const yTicks = yTicksOf(seen);
    // The y axis: numeric labels stacked in one column left of the dots, at a round step (1, 2 or 5 × 10^k).
    expect(yTicks.length).toBeGreaterThanOrEqual(3);
    const ys = yTicks.map((l) => Number(l.text)).sort((a, b) => a - b);
    const step = ys[1]! - ys[0]!;
    const exponent = Math.floor(Math.log10(step) + 1e-9);
    expect([1, 2, 5]).toContainEqual(Math.round(step / 10 ** exponent));
    for (const [i, v] of ys.entries()) {
      expect(near(v, ys[0]! + i * step, 1e-9)).toBe(true);
      expect(near(v / step, Math.round(v / step), 1e-9)).toBe(true);
      expect(yTicks.find((l) => Number(l.text) === v)!.text.split('.')[1]?.length ?? 0).toBeLessThanOrEqual(
        Math.max(0, -exponent),
      );
    }

    // The x axis: whole pair numbers under the dots of those pairs.
    const xTicks = seen.labels.filter((l) => numeric(l) && !yTicks.includes(l));
    expect(xTicks.length).toBeGreaterThanOrEqual(2);
    for (const l of xTicks) {
      const pair = Number(l.text);
      expect(Number.isInteger(pair) && pair >= 1 && pair <= seen.dots.length).toBe(true);
      const dot = seen.dots[pair - 1]!;
      expect(near((l.left + l.right) / 2, (dot.left + dot.right) / 2, 1)).toBe(true);
      expect(l.top).toBeGreaterThan(Math.max(...seen.dots.map((d) => d.bottom)));
    }
  }, 60_000);

  it('the plot, in headless Chromium: the lanes are separated by one boundary each and named over their ' +
    'dots', async () => {
    const seen = await seenPlot();
    const dotX = seen.dots.map((d) => d.cx);
    const runs = runsOf(seen);
    // The lanes: a boundary between each two lanes, and each lane's name over its own dots, left to right.
    expect(runs.map((r) => r.lane)).toEqual(['screen', 'confirmation', 'heldout']);
    const names = {screen: 'screen', confirmation: 'confirmation', heldout: 'held-out'} as Record<string, string>;
    for (const [i, r] of runs.entries()) {
      if (i > 0) expect(seen.verticals.filter((x) => x > dotX[runs[i - 1]!.to]! && x < dotX[r.from]!)).toHaveLength(1);
      const name = seen.labels.filter((l) => l.text === names[r.lane]);
      expect(name).toHaveLength(1);
      const centre = (name[0]!.left + name[0]!.right) / 2 - seen.svgLeft;
      const lo = i === 0 ? 0 : (dotX[runs[i - 1]!.to]! + dotX[r.from]!) / 2;
      const hi = i === runs.length - 1 ? Infinity : (dotX[r.to]! + dotX[runs[i + 1]!.from]!) / 2;
      expect([r.lane, centre > lo - 40 && centre < hi + 40]).toEqual([r.lane, true]);
    }
    expect(seen.verticals.filter((x) => x > dotX[0]! && x < dotX.at(-1)!)).toHaveLength(runs.length - 1);
  }, 60_000);

  it("the plot, in headless Chromium: the line follows the points (each lane's line through the mean of its " +
    'dots so far, the first confirmation pairs included)', async () => {
    const seen = await seenPlot();
    // The line follows the points: over each pair, a line's vertex at the mean of its lane's dots so far.
    for (const [i, d] of seen.dots.entries()) {
      const sofar = seen.dots.slice(0, i + 1).filter((x) => x.lane === d.lane);
      const expected = sofar.reduce((a, x) => a + x.cy, 0) / sofar.length;
      const vertex = seen.lines
        .flatMap((l) => l.points)
        .find(([x, y]) => near(x!, d.cx, 0.15) && near(y!, expected, 0.6));
      expect([i, d.lane, vertex !== undefined]).toEqual([i, d.lane, true]);
    }
  }, 60_000);

  it('the plot, in headless Chromium: no label over a mark (a dot or a line), nor over another label', async () => {
    const seen = await seenPlot();
    // No label over a mark (a dot or a line), nor over another label.
    const overlap = (a: {left: number; right: number; top: number; bottom: number}, b: typeof a) =>
      a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const marks = [
      ...seen.dots.map((d) => ({what: `dot ${d.lane}`, ...d})),
      ...seen.lines.map((l) => ({what: `line ${l.lane}`, ...l})),
    ];
    for (const l of seen.labels) {
      for (const m of marks) expect([l.text, m.what, overlap(l, m)]).toEqual([l.text, m.what, false]);
      for (const o of seen.labels)
        if (o !== l) expect([l.text, o.text, overlap(l, o)]).toEqual([l.text, o.text, false]);
    }
  }, 60_000);

  it(
    "shows each arm's absolute mean score with its 95% t-interval from the matched trials: report --json, md, " +
      'html and status (human and --json)',
    () => {
      const trials = JSON.parse(fs.readFileSync(t.file(`candidates/${c}/matched_trials.json`), 'utf8'))
        .trials as Array<{
        candidate_score: number;
        incumbent_score: number;
      }>;
      // Student-t 0.975 quantiles by degrees of freedom, from tables: an oracle independent of src/stats.
      const T975: Record<number, number> = {1: 12.7062047, 2: 4.30265273, 3: 3.18244631, 4: 2.77644511, 5: 2.57058184};
      const arm = (xs: number[]) => {
        const n = xs.length;
        const mean = xs.reduce((a, b) => a + b, 0) / n;
        const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
        const half = (T975[n - 1]! * sd) / Math.sqrt(n);
        return {n, mean, low: mean - half, high: mean + half};
      };
      const want = {
        candidate: arm(trials.map((x) => x.candidate_score)),
        incumbent: arm(trials.map((x) => x.incumbent_score)),
      };
      const close = (got: {n: number; mean: number; low: number | null; high: number | null}, w: typeof got) => {
        expect(got.n).toBe(w.n);
        for (const k of ['mean', 'low', 'high'] as const) expect(got[k]).toBeCloseTo(w[k]!, 6);
      };
      const out = path.join(t.dir, 'arms');
      fs.mkdirSync(out);
      const r = runCliProcess(['report', c, '--out', out, '--knowledge', t.knowledge, '--json']);
      expect(resultSchemaProblem('result-report', r.json)).toBeNull();
      close(r.json.arms.candidate, want.candidate);
      close(r.json.arms.incumbent, want.incumbent);
      expect(r.json.arms.level).toBe(0.95);
      expect(r.json.arms.method).toMatch(/Student-t interval per arm/);
      const f = (x: number) => x.toFixed(4);
      const shown = (w: typeof want.candidate) => `${f(w.mean)} | [${f(w.low)}, ${f(w.high)}]`;
      const md = fs.readFileSync(r.json.markdown, 'utf8');
      expect(md).toContain(`| candidate | \`${c.slice(0, 12)}\` | ${want.candidate.n} | ${shown(want.candidate)} |`);
      expect(md).toContain(
        `| incumbent | \`${t.baseline.slice(0, 12)}\` | ${want.incumbent.n} | ${shown(want.incumbent)} |`,
      );
      const html = fs.readFileSync(r.json.html, 'utf8');
      expect(html).toContain(
        `<tr data-arm="candidate"><td>candidate</td><td><code>${c.slice(0, 12)}</code></td><td>${want.candidate.n}` +
          `</td><td>${f(want.candidate.mean)}</td><td>[${f(want.candidate.low)}, ${f(want.candidate.high)}]</td></tr>`,
      );
      const status = runCliProcess(['status', '--knowledge', t.knowledge, '--json']).json;
      expect(resultSchemaProblem('result-status', status)).toBeNull();
      const detail = status.scenarios[0].details.find((d: {bundle_digest: string}) => d.bundle_digest === c);
      expect(detail.arms).toEqual(r.json.arms);
      const human = runCliProcess(['status', '--knowledge', t.knowledge], {env: {NO_COLOR: '1'}}).stdout;
      expect(human).toContain(
        `scores: candidate ${f(want.candidate.mean)} [${f(want.candidate.low)}, ${f(want.candidate.high)}], ` +
          `incumbent ${f(want.incumbent.mean)} [${f(want.incumbent.low)}, ${f(want.incumbent.high)}] ` +
          '(95% t-interval per arm)',
      );
    },
  );

  it('an inconclusive candidate (recorded with lifecycle rejected) is reported as what it is', () => {
    const i = t.propose('tie', {'playbook/playbook.md': 'Be helpful, or not.\n'});
    const env = fakeEnv(t.dir, {FAKE_DELTA: 'by-lane:0.3,0.1,0.3', FAKE_NOISE: '0', FAKE_ALTERNATE: '1'});
    const confirmed = t.cli(['confirm', i, ...evalArgs()], env);
    expect([confirmed.json.status, confirmed.json.lifecycle]).toEqual(['inconclusive', 'rejected']);
    const md = runCliProcess(['report', i, '--format', 'md', '--knowledge', t.knowledge]).stdout;
    const html = runCliProcess(['report', i, '--format', 'html', '--knowledge', t.knowledge]).stdout;
    for (const text of [md, html]) {
      expect(text).not.toMatch(/lifecycle.{0,12}rejected/);
      expect(text).toContain(
        'The candidate is closed as inconclusive: neither shown better nor worse within its budget; it will not be ' +
          'promoted.',
      );
    }
    expect(md).toContain(`**inconclusive**: ${confirmed.json.comparison.reason}.`);
  });

  it('creates the --out folder and its missing parents (relative to the working folder)', () => {
    const work = path.join(t.dir, 'work', 'here');
    fs.mkdirSync(work, {recursive: true});
    const before = treeHash(t.knowledge);
    const r = runCliProcess(['report', c, '--out', '../reports/week1', '--knowledge', t.knowledge, '--json'], {
      cwd: work,
    });
    expect([r.status, r.stderr]).toEqual([0, '']);
    const folder = path.join(t.dir, 'work', 'reports', 'week1');
    expect(fs.readdirSync(folder).sort()).toEqual([`report-${c.slice(0, 12)}.html`, `report-${c.slice(0, 12)}.md`]);
    expect(path.resolve(work, r.json.markdown)).toBe(path.join(folder, `report-${c.slice(0, 12)}.md`));
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it('refuses what it cannot report, with one line and exit 2', () => {
    fs.writeFileSync(path.join(t.dir, 'a-file'), 'not a folder\n');
    const p = t.propose('p', {'playbook/playbook.md': 'Not evaluated yet.\n'});
    const before = treeHash(t.knowledge);
    for (const args of [
      ['report', p, '--format', 'md'],
      ['report', c],
      ['report', c, '--out', path.join(t.dir, 'a-file', 'reports')],
    ]) {
      const r = runCliProcess([...args, '--knowledge', t.knowledge]);
      expect([args, r.status, r.stderr.trim().split('\n').length]).toEqual([args, 2, 1]);
      expect(r.stderr).toMatch(/^error [A-Z_]+: /);
    }
    expect(treeHash(t.knowledge)).toBe(before);
  });
});
