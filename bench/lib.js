// Small timing helpers for `npm run bench`: medians of repeated runs, measured in one process.
import {spawnSync} from 'node:child_process';
import {performance} from 'node:perf_hooks';

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Median milliseconds of fn over `runs` runs after `warmup` runs. */
export function timeIt(fn, {runs = 200, warmup = 20} = {}) {
  for (let i = 0; i < warmup; i++) fn();
  const t = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    fn();
    t.push(performance.now() - s);
  }
  return median(t);
}

/** Median wall milliseconds of spawning each command, interleaved so that noise hits all alike. */
export function timeCommands(commands, runs = 15) {
  const times = commands.map(() => []);
  for (let r = 0; r < runs + 2; r++) {
    commands.forEach(([cmd, args, opts], i) => {
      const s = performance.now();
      const p = spawnSync(cmd, args, {stdio: ['ignore', 'pipe', 'pipe'], ...opts});
      const ms = performance.now() - s;
      if (p.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
      if (r >= 2) times[i].push(ms);
    });
  }
  return times.map(median);
}

export function printTable(rows) {
  const head = ['measure', 'value', 'target', 'ok', 'command'];
  const cells = rows.map((r) => [r.measure, r.value, r.target, r.ok === null ? '-' : r.ok ? 'yes' : 'NO', r.command]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => String(c[i]).length)));
  const line = (c) => c.map((x, i) => String(x).padEnd(widths[i])).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}
