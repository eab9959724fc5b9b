// verify of the bench's 1,000-bundle tree (50 components of about 2 KB each) against the
// read-and-SHA-256 floor, for one or more built trees of autoctx in one process, interleaved:
//   node bench/verify-ab.js [--runs N] [ROOT ...]     (default ROOT: this tree)
// Each ROOT is a checkout with dist/ built (`git worktree add /tmp/base <rev> && cd /tmp/base &&
// npm ci && npm run build`). The tree is made once with the first ROOT's code (list the oldest first) and
// verified by every ROOT.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {createHash} from 'node:crypto';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {alternate, makeVerifyTree} from './lib.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 21;
const roots = argv.filter((a, i) => i !== runsAt && i !== runsAt + 1);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`verify-ab: --runs takes a whole number of at least 1, not ${JSON.stringify(argv[runsAt + 1] ?? '')}`);
  process.exit(2);
}
if (roots.length === 0) roots.push(path.join(here, '..'));
// A module where the checkout keeps it: a folder per system, else an older commit's flat layout.
const load = (root, rel) => {
  const flat = rel.replace(
    new RegExp(
      String.raw`^(dist\/(?:core|model|store\/kinds|store))\/` +
        String.raw`(?:bundle|common|delivery|evaluation|inspection|promotion|release|rollback|signing|files|io)\/`,
    ),
    '$1/',
  );
  const file =
    [rel, flat].map((r) => path.join(path.resolve(root), r)).find((p) => fs.existsSync(p)) ??
    path.join(path.resolve(root), rel);
  return import(pathToFileURL(file).href);
};

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-verify-ab-'));
try {
  const tree = path.join(work, 'tree');
  // Made by the first ROOT's code: a later autoctx reads an earlier one's trees, not the other way round.
  const maker = roots[0];
  const {init} = await load(maker, 'dist/core/common/init.js');
  const {propose} = await load(maker, 'dist/core/promotion/propose.js');
  const files = await makeVerifyTree({init, propose, tree, source: path.join(work, 'src'), componentCount: 50});
  const fns = [
    [
      'read + SHA-256 of every file',
      () => files.forEach((f) => createHash('sha256').update(fs.readFileSync(f)).digest('hex')),
    ],
  ];
  for (const root of roots) {
    const {verifyInParallel} = await load(root, 'dist/core/common/verify.js');
    fns.push([
      `verify, ${root}`,
      async () => {
        const r = await verifyInParallel({knowledge: tree});
        if (r.errors.length > 0) throw new Error(`${root}: the tree has errors: ${r.errors[0].code}`);
      },
    ]);
  }
  const times = await alternate(
    fns.map(([, fn]) => fn),
    runs,
  );
  const floor = times[0];
  console.log(`${files.length} files; median of ${runs}, interleaved`);
  for (const [i, [name]] of fns.entries())
    console.log(
      `${times[i].toFixed(0).padStart(6)} ms  ${i === 0 ? '      ' : `${(times[i] / floor).toFixed(2)}×`}  ${name}`,
    );
} finally {
  fs.rmSync(work, {recursive: true, force: true});
}
