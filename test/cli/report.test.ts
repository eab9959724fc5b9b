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
      expect(md).toContain(`**confirmed**, lifecycle \`confirmed\`: ${record.comparison.reason}`);
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
        insidePlot: dots.every((d) => Number(d.getAttribute('cy')) > 0 && Number(d.getAttribute('cy')) < 320),
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
