// npm run bench: the benchmark rows (bench/run.js) for a base commit and for
// this tree, measured in the same run on this machine, alternating base and
// this tree twice and keeping each one's better figure per row; then this
// tree's table with its targets, and the ratio of each row to the base.
// A row worse than the base by a ratio over 1.10 is marked.
//   BENCH_BASE=<rev> npm run bench   (default: the commit in bench/base.txt)
//   BENCH_ONLY=<section> npm run bench   (only that section's rows: run.js --only)
// The base is checked out with `git worktree` into a temporary folder, shares
// this tree's node_modules when package-lock.json is the same (else `npm ci`),
// and is built with its own build script.
import {execFileSync, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {printTable} from './lib.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const base = process.env.BENCH_BASE ?? fs.readFileSync(path.join(here, 'base.txt'), 'utf8').trim();
const git = (...args) => execFileSync('git', args, {cwd: root, encoding: 'utf8'}).trim();
const baseCommit = git('rev-parse', '--verify', `${base}^{commit}`);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-bench-base-'));
const baseRoot = path.join(work, 'tree');

const run = (cmd, args, cwd, env = {}) => {
  const r = spawnSync(cmd, args, {cwd, stdio: ['ignore', 'inherit', 'inherit'], env: {...process.env, ...env}});
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}`);
};

try {
  git('worktree', 'add', '--detach', baseRoot, baseCommit);
  const sameLock =
    git('show', `${baseCommit}:package-lock.json`) ===
    fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8').trim();
  if (sameLock) fs.symlinkSync(path.join(root, 'node_modules'), path.join(baseRoot, 'node_modules'));
  else run('npm', ['ci', '--no-audit', '--no-fund'], baseRoot);
  // The base's fixtures must be its own: the bench reads the example and the fake evaluator from the tree it measures.
  run('npm', ['run', 'build', '--silent'], baseRoot);

  const measure = (tree, file) => {
    console.log(`\n== ${tree === root ? 'this tree' : `base ${baseCommit.slice(0, 12)}`} ==`);
    const only = process.env.BENCH_ONLY ? ['--only', process.env.BENCH_ONLY] : [];
    run(process.execPath, [path.join(here, 'run.js'), '--root', tree, '--json', file, ...only], root, {
      AUTOCTX_BENCH_CACHE: path.join(work, 'cache'),
    });
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  };
  const rounds = [];
  for (let i = 0; i < 2; i++)
    rounds.push({
      base: measure(baseRoot, path.join(work, `base-${i}.json`)),
      head: measure(root, path.join(work, `head-${i}.json`)),
    });
  // Each row's better figure over the rounds; its own target's verdict is the last round's.
  const best = (side) =>
    rounds.at(-1)[side].map((row, r) => {
      const values = rounds.map((x) => x[side][r]?.metric).filter((v) => typeof v === 'number');
      return {...row, metric: row.better === 'higher' ? Math.max(...values) : Math.min(...values)};
    });
  const [b, h] = [best('base'), best('head')];
  console.log(`\n== this tree against base ${baseCommit.slice(0, 12)}: the better of two runs each, alternating ==\n`);
  printTable(
    h.map((row) => {
      const old = b.find((x) => x.measure === row.measure);
      const ratio = old ? (row.better === 'higher' ? old.metric / row.metric : row.metric / old.metric) : null;
      return {
        measure: row.measure,
        value: `${row.metric.toPrecision(4)} vs base ${old ? old.metric.toPrecision(4) : '-'}`,
        target: ratio === null ? 'new row' : `ratio ${ratio.toFixed(3)} (${row.better} is better)`,
        ok: ratio === null ? null : ratio <= 1.1,
        command:
          row.target === 'none (shown)'
            ? 'no target of its own'
            : `own target ${row.target}: ${row.ok ? 'met' : 'NOT met'} in the last run`,
      };
    }),
  );
} finally {
  // biome-ignore lint/plugin: best effort in a benchmark's cleanup: a worktree already gone is the goal
  try {
    git('worktree', 'remove', '--force', baseRoot);
  } catch {
    // already gone
  }
  fs.rmSync(work, {recursive: true, force: true});
}
