// Small timing helpers for `npm run bench`: medians of repeated runs, measured in one process.
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
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

/** Median milliseconds of each (async) function over `runs` rounds after one unmeasured round, interleaved. */
export async function alternate(fns, runs = 7) {
  const times = fns.map(() => []);
  for (let r = 0; r < runs + 1; r++)
    for (const [i, fn] of fns.entries()) {
      const s = performance.now();
      await fn();
      if (r > 0) times[i].push(performance.now() - s);
    }
  return times.map(median);
}

/**
 * Median milliseconds of two (async) functions over `rounds` rounds after one unmeasured round, each round running
 * them in both orders (a, b, b, a), so that what one leaves behind (garbage, a cold cache) weighs on both alike.
 */
export async function abba(a, b, rounds = 15) {
  const times = [[], []];
  for (let r = 0; r < rounds + 1; r++)
    for (const i of [0, 1, 1, 0]) {
      const s = performance.now();
      await [a, b][i]();
      if (r > 0) times[i].push(performance.now() - s);
    }
  return times.map(median);
}

/**
 * verify's bench tree: a baseline and 999 proposals, each revision changing
 * every one of `componentCount` components of about 2 KB of Markdown (one
 * line break in 70 characters), with `init` and `propose` of the autoctx that
 * builds it. Returns every file of the tree.
 */
export async function makeVerifyTree({init, propose, tree, source, componentCount}) {
  const kinds = ['playbook', 'hints', 'prompt_fragment', 'tool_guidance', 'completion_check'];
  const writeSource = (i) => {
    for (let j = 0; j < componentCount; j++) {
      const kind = kinds[j % kinds.length];
      fs.mkdirSync(path.join(source, kind), {recursive: true});
      const file = j < kinds.length ? `${kind}.md` : `part-${String(j).padStart(2, '0')}.md`;
      fs.writeFileSync(
        path.join(source, kind, file),
        `${kind} ${i}.${j}: ${'Check the disk before restarting a service; write down what you saw.\n'.repeat(28)}`,
      );
    }
  };
  writeSource(0);
  await init({knowledge: tree, scenario: 'demo', from: source});
  for (let i = 1; i < 1000; i++) {
    writeSource(i);
    await propose({knowledge: tree, from: source, runId: `r${i}`});
  }
  const files = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, {withFileTypes: true})) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else files.push(p);
    }
  };
  walk(tree);
  return files;
}

/** git in `repo` with the repository's own settings only: the user's and the system's configuration are not read. */
export function gitIn(repo, args) {
  const env = {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0'};
  const r = spawnSync('git', args, {cwd: repo, encoding: 'utf8', env});
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/**
 * A git repository at `dir` whose knowledge/ (made by `ops.init`) went through `rounds` rounds of a promotion
 * (`ops.promote`: propose, confirm and promote a new revision of the playbook) and a rollback (`ops.rollback`), one
 * commit each: 2 × rounds commits of state changes. `merged`: each round on its own branch made from main's tip and
 * merged back with a merge commit (--no-ff) before the next starts, as the team workflow serializes state changes on
 * main, so main's history holds `rounds` merges; else every commit on main. Returns the knowledge root.
 */
export async function makeTeamTree({dir, rounds, merged, ops}) {
  const knowledge = path.join(dir, 'knowledge');
  const src = path.join(dir, 'src');
  const writeSource = (i) => {
    fs.mkdirSync(path.join(src, 'playbook'), {recursive: true});
    fs.writeFileSync(path.join(src, 'playbook/playbook.md'), `Playbook revision ${i}: check the disk first.\n`);
  };
  writeSource(0);
  await ops.init({knowledge, scenario: 'demo', from: src});
  gitIn(dir, ['init', '-q', '-b', 'main']);
  for (const [key, value] of [
    ['user.name', 'Bench'],
    ['user.email', 'bench@example.test'],
    ['commit.gpgsign', 'false'],
    ['core.autocrlf', 'false'],
  ])
    gitIn(dir, ['config', key, value]);
  const commit = (message) => {
    gitIn(dir, ['add', '-A', 'knowledge']);
    gitIn(dir, ['commit', '-q', '-m', message]);
  };
  commit('knowledge: baseline');
  for (let i = 1; i <= rounds; i++) {
    const branch = `change-${i}`;
    if (merged) gitIn(dir, ['checkout', '-q', '-b', branch, 'main']);
    writeSource(i);
    commit(`autoctx promote ${await ops.promote(knowledge, src, i)}`);
    await ops.rollback(knowledge, i);
    commit(`autoctx rollback (round ${i})`);
    if (merged) {
      gitIn(dir, ['checkout', '-q', 'main']);
      gitIn(dir, ['merge', '-q', '--no-ff', '--no-edit', branch]);
      gitIn(dir, ['branch', '-q', '-d', branch]);
    }
  }
  return knowledge;
}
