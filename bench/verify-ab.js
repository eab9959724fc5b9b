// verify of the bench's 1,000-bundle tree (50 components of about 2 KB each) against the
// read-and-SHA-256 floor, for one or more built trees of autoctx in one process, interleaved:
//   node bench/verify-ab.js [--runs N] [ROOT ...]     (default ROOT: this tree)
// Each ROOT is a checkout with dist/ built (`git worktree add /tmp/base <rev> && cd /tmp/base &&
// npm ci && npm run build`). The tree is made once with this tree's code and verified by every ROOT.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {createHash} from 'node:crypto';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {median} from './lib.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 21;
const roots = argv.filter((a, i) => i !== runsAt && i !== runsAt + 1);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number of at least 1');
if (roots.length === 0) roots.push(path.join(here, '..'));
const load = (root, rel) => import(pathToFileURL(path.join(path.resolve(root), rel)).href);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-verify-ab-'));
try {
  const tree = path.join(work, 'tree');
  const source = path.join(work, 'src');
  const kinds = ['playbook', 'hints', 'prompt_fragment', 'tool_guidance', 'completion_check'];
  const writeSource = (i) => {
    for (let j = 0; j < 50; j++) {
      const kind = kinds[j % kinds.length];
      fs.mkdirSync(path.join(source, kind), {recursive: true});
      const file = j < kinds.length ? `${kind}.md` : `part-${String(j).padStart(2, '0')}.md`;
      fs.writeFileSync(path.join(source, kind, file), `${kind} ${i}.${j}: ${'Check the disk before restarting a service; write down what you saw.\n'.repeat(28)}`);
    }
  };
  const {init} = await load(path.join(here, '..'), 'dist/core/init.js');
  const {propose} = await load(path.join(here, '..'), 'dist/core/propose.js');
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
  const fns = [['read + SHA-256 of every file', () => files.forEach((f) => createHash('sha256').update(fs.readFileSync(f)).digest('hex'))]];
  for (const root of roots) {
    const {verifyInParallel} = await load(root, 'dist/core/verify.js');
    fns.push([
      `verify, ${root}`,
      async () => {
        const r = await verifyInParallel({knowledge: tree});
        if (r.errors.length > 0) throw new Error(`${root}: the tree has errors: ${r.errors[0].code}`);
      },
    ]);
  }
  const times = fns.map(() => []);
  for (let r = 0; r <= runs; r++)
    for (const [i, [, fn]] of fns.entries()) {
      const s = performance.now();
      await fn();
      if (r > 0) times[i].push(performance.now() - s);
    }
  const floor = median(times[0]);
  console.log(`${files.length} files; median of ${runs}, interleaved`);
  for (const [i, [name]] of fns.entries()) console.log(`${median(times[i]).toFixed(0).padStart(6)} ms  ${i === 0 ? '      ' : `${(median(times[i]) / floor).toFixed(2)}×`}  ${name}`);
} finally {
  fs.rmSync(work, {recursive: true, force: true});
}
