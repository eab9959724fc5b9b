// The benchmark rows: one table, every figure measured in this run on this machine.
// node bench/run.js [--root DIR] [--json FILE] [--only SECTION]: measures the built project at DIR
// (default: this one), prints the table, and with --json writes the rows with
// their numeric figures (bench/compare.js, which `npm run bench` runs, measures
// a base commit and this tree with it and compares them row by row). --only
// measures one section's rows alone (the sections of ONLY below; BENCH_ONLY
// for compare.js), as the whole run takes about 12 minutes.
import fs from 'node:fs';
import {spawn, spawnSync} from 'node:child_process';
import {createInterface} from 'node:readline';
import {performance} from 'node:perf_hooks';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {createHash} from 'node:crypto';
import {abba, alternate, gitIn, makeTeamTree, makeVerifyTree, median, printTable, timeCommands, timeIt} from './lib.js';

const argv = process.argv.slice(2);
const option = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(option('--root') ?? path.join(here, '..'));
// A module of the measured tree, where that tree keeps it: the layout with a folder per system, else a
// base commit's flat layout (the same file one folder up), so one run.js measures both.
const inTree = (rel) => {
  const flat = rel.replace(
    new RegExp(
      String.raw`^(dist\/(?:core|model|store\/kinds|store))\/` +
        String.raw`(?:bundle|common|delivery|evaluation|inspection|promotion|release|rollback|signing|files|io)\/`,
    ),
    '$1/',
  );
  return [rel, flat].map((r) => path.join(root, r)).find((p) => fs.existsSync(p)) ?? path.join(root, rel);
};
const load = (rel) => import(pathToFileURL(inTree(rel)).href);
const {
  authorizeCampaignPromotion,
  confirmationPolicyDigest,
  createBundle,
  createCandidateFixtureReservation,
  DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY,
  evaluateCampaignEvidence,
  evaluateMatchedTrials,
  validateBundle,
} = await load('dist/model/index.js');
const {canonicalJson, stableDigest} = await load('dist/canonical/index.js');
const {init} = await load('dist/core/common/init.js');
const {propose} = await load('dist/core/promotion/propose.js');
const {verifyInParallel} = await load('dist/core/common/verify.js');
const rows = [];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-bench-'));

// The sections --only can run alone.
const ONLY = {'merged-branches': mergedBranchRows, 'agent-evaluator': agentEvaluatorRows};
const only = option('--only');
if (only !== undefined) {
  if (!(only in ONLY)) throw new Error(`--only: no section ${only} (${Object.keys(ONLY).join(', ')})`);
  await ONLY[only]();
  finish();
  process.exit(0);
}

// 1. Cold start: `autoctx status --json` on the example tree, as a ratio to `node -e 0`.
const knowledge = path.join(work, 'knowledge');
await init({knowledge, scenario: 'demo', from: path.join(root, 'knowledge-example/demo/baseline')});
await propose({knowledge, from: path.join(root, 'knowledge-example/demo/candidate-better')});
await propose({knowledge, from: path.join(root, 'knowledge-example/demo/candidate-worse'), runId: 'b'});
const statusArgs = [path.join(root, 'bin/run.js'), 'status', '--json', '--knowledge', knowledge];
const [nodeMs, statusMs] = timeCommands([
  [process.execPath, ['-e', '0']],
  [process.execPath, statusArgs],
]);
const ratio = statusMs / nodeMs;
rows.push({
  measure: 'cold start: status --json / node -e 0',
  value: `${ratio.toFixed(2)}x (${statusMs.toFixed(0)} ms / ${nodeMs.toFixed(0)} ms)`,
  target: '<= 3x',
  ok: ratio <= 3,
  metric: ratio,
  better: 'lower',
  command: 'node bin/run.js status --json --knowledge <example tree>  vs  node -e 0 (median of 15, interleaved)',
});

// 2. Build and validate a bundle of 50 components of 2 KB each.
const components = Array.from({length: 50}, (_, i) => ({
  kind: ['playbook', 'hints', 'prompt_fragment', 'tool_guidance', 'completion_check'][i % 5],
  key: `component-${String(i).padStart(2, '0')}`,
  content: `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(36)}`.slice(0, 2048),
  media_type: 'text/markdown',
}));
const input = {scenario: 'bench', evaluator_epoch: 'epoch-1', parent_digest: null, components};
const text = JSON.stringify(createBundle(input));
const buildValidate = timeIt(() => validateBundle(JSON.parse(JSON.stringify(createBundle(input)))), {runs: 300});
const buildOnly = timeIt(() => createBundle(input), {runs: 300});
const validateOnly = timeIt(() => validateBundle(JSON.parse(text)), {runs: 300});
rows.push({
  measure: 'build + validate 50 x 2 KB bundle',
  value: `${buildValidate.toFixed(3)} ms (build ${buildOnly.toFixed(3)}, parse+validate ${validateOnly.toFixed(3)})`,
  target: '<= 1.5 ms',
  ok: buildValidate <= 1.5,
  metric: buildValidate,
  better: 'lower',
  command: 'createBundle + JSON round trip + validateBundle, in process (median of 300)',
});

// 3. Decide a comparison over 2,000 matched pairs (100 screen, 1,800 confirmation, 100 held-out),
//    pair keys included: evaluateMatchedTrials hashes every pair to refuse duplicates.
const subject = {digest: 'c'.repeat(64), parent_digest: 'p'.repeat(64), evaluator_epoch: 'epoch-1'};
const lanesOf = (i) => (i < 100 ? 'screen' : i < 1900 ? 'confirmation' : 'heldout');
const pairs = Array.from({length: 2000}, (_, i) => ({
  candidate_digest: subject.digest,
  incumbent_digest: subject.parent_digest,
  evaluator_epoch: 'epoch-1',
  cohort: 'bench-cohort',
  fixture: `fixture-${i}`,
  fixture_digest: `${lanesOf(i)}-block-${Math.floor(i / 3.34)}`,
  seed: i,
  lane: lanesOf(i),
  candidate_score: 0.6 + ((i * 7919) % 100) / 1000,
  incumbent_score: 0.5,
  candidate_valid: true,
  incumbent_valid: true,
  pair_key: '',
}));
const bigPolicy = {
  min_screen_pairs: 100,
  min_confirmation_pairs: 6,
  max_confirmation_pairs: 1800,
  min_heldout_pairs: 100,
  min_effect: 0,
  confidence_z: 1.96,
};
const decision = evaluateMatchedTrials(subject, pairs, bigPolicy);
const decideMs = timeIt(() => evaluateMatchedTrials(subject, pairs, bigPolicy), {runs: 100, warmup: 10});
rows.push({
  measure: 'decide a comparison over 2,000 pairs',
  value: `${decideMs.toFixed(2)} ms (${decision.decision})`,
  target: '<= 5 ms',
  ok: decideMs <= 5,
  metric: decideMs,
  better: 'lower',
  command: 'evaluateMatchedTrials, 100/1800/100 pairs, pair keys included (median of 100)',
});

// 4. The campaign evidence gate over the same 2,000 pairs (about 600 fixture blocks).
const campaignPolicy = {...DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY};
const gatePolicy = {...bigPolicy, min_heldout_pairs: 10}; // ~30 held-out blocks
const gate = evaluateCampaignEvidence(pairs, gatePolicy, campaignPolicy);
if (!gate.authorized) throw new Error(`the gate benchmark should run the whole gate: ${gate.reason}`);
const gateMs = timeIt(() => evaluateCampaignEvidence(pairs, gatePolicy, campaignPolicy), {runs: 100, warmup: 10});
rows.push({
  measure: 'campaign evidence gate over 2,000 pairs',
  value:
    `${gateMs.toFixed(2)} ms (${gate.independent_confirmation_blocks} confirmation blocks, ` +
    `${gate.authorized ? 'authorized' : 'blocked'})`,
  target: '<= 10 ms',
  ok: gateMs <= 10,
  metric: gateMs,
  better: 'lower',
  command: 'evaluateCampaignEvidence, cluster_t, 2,000 pairs in ~600 blocks (median of 100)',
});

// 5. The whole authorization: replay of the comparison, lineage and plan checks, the gate, and the
//    evidence digest (every trial, sorted by pair key, hashed once).
const plan = createCandidateFixtureReservation({
  campaign_id: 'bench',
  candidate_digest: subject.digest,
  evaluator_epoch: 'epoch-1',
  cohort: 'bench-cohort',
  units: pairs.map((t) => ({lane: t.lane, fixture_digest: t.fixture_digest, seed: t.seed})),
});
const reservation = {
  campaign_id: 'bench',
  candidate_digest: subject.digest,
  incumbent_digest: subject.parent_digest,
  evaluator_epoch: 'epoch-1',
  candidate_index: 0,
  allocated_alpha: 0.025,
  required_confidence_z: 1.96,
  confirmation_policy_digest: confirmationPolicyDigest(gatePolicy),
  status: 'reserved',
  reason: null,
  evidence_digest: null,
  independent_confirmation_blocks: 0,
  independent_heldout_blocks: 0,
};
const comparison = evaluateMatchedTrials(subject, pairs, gatePolicy);
const authorize = () =>
  authorizeCampaignPromotion({
    candidate: subject,
    comparison,
    trials: pairs,
    confirmation_policy: gatePolicy,
    campaign_policy: campaignPolicy,
    reservation,
    fixture_reservation: plan,
  });
if (!authorize().authorized) throw new Error('the authorization benchmark should authorize');
const authMs = timeIt(authorize, {runs: 50, warmup: 5});
rows.push({
  measure: 'campaign authorization over 2,000 pairs',
  value: `${authMs.toFixed(2)} ms`,
  target: '<= 10 ms',
  ok: authMs <= 10,
  metric: authMs,
  better: 'lower',
  command: 'authorizeCampaignPromotion: replay + plan checks + gate + evidence digest (median of 50)',
});

// 6. Per-pair overhead with a persistent evaluator that answers at once: confirmations of 200 and of
//    2,000 pairs (the effect flips sign, so the budget runs out), every pair recorded durably (the
//    run journal, folded into the envelope at lane boundaries and at the end). The overhead per pair
//    must not grow with the pairs recorded before it: the ratio of the two is the row.
const pairDir = path.join(work, 'pairs');
fs.mkdirSync(pairDir);
const fake = path.join(root, 'test/fixtures/evaluators/fake.js');
const confirmSetup = async (n) => {
  const dir = path.join(pairDir, `n${n}`);
  fs.mkdirSync(dir);
  const fixturesFile = path.join(dir, 'fixtures.jsonl');
  const fx = [
    {fixture: 's', lane: 'screen'},
    ...Array.from({length: n}, (_, i) => ({fixture: `c${i}`, lane: 'confirmation'})),
    {fixture: 'h', lane: 'heldout'},
  ];
  fs.writeFileSync(
    fixturesFile,
    fx.map((f, i) => JSON.stringify({...f, initial_state: i, observation: f.fixture})).join('\n') + '\n',
  );
  const policyFile = path.join(dir, 'policy.json');
  fs.writeFileSync(
    policyFile,
    JSON.stringify({min_screen_pairs: 1, min_confirmation_pairs: 2, max_confirmation_pairs: n, min_heldout_pairs: 1}),
  );
  const k = path.join(dir, 'knowledge');
  await init({knowledge: k, scenario: 'bench', from: path.join(root, 'knowledge-example/demo/baseline')});
  const cand = await propose({knowledge: k, from: path.join(root, 'knowledge-example/demo/candidate-better')});
  const short = await propose({
    knowledge: k,
    from: path.join(root, 'knowledge-example/demo/candidate-worse'),
    runId: 'short',
  });
  return {k, fixturesFile, policyFile, cand: cand.bundle_digest, short: short.bundle_digest};
};
const confirmRun = (setup, digest, delta) => {
  const ioFile = path.join(pairDir, 'io.json');
  const started = performance.now();
  const res = spawnSync(
    process.execPath,
    [
      '--import',
      path.join(here, 'io-bytes.js'),
      path.join(root, 'bin/run.js'),
      'confirm',
      digest,
      '--knowledge',
      setup.k,
      '--evaluator',
      `node ${fake}`,
      '--evaluator-mode',
      'persistent',
      '--fixtures',
      setup.fixturesFile,
      '--policy',
      setup.policyFile,
      '--quiet',
      '--json',
    ],
    {
      encoding: 'utf8',
      env: {...process.env, FAKE_DELTA: delta, FAKE_NOISE: '0', FAKE_ALTERNATE: '1', AUTOCTX_IO_FILE: ioFile},
    },
  );
  const ms = performance.now() - started;
  const io = fs.existsSync(ioFile) ? JSON.parse(fs.readFileSync(ioFile, 'utf8')) : {write_bytes: NaN, wchar: NaN};
  return {
    ms,
    pairs: JSON.parse(res.stdout).pairs_evaluated,
    io,
    envelope: fs.statSync(path.join(setup.k, 'bench/context_bundles/candidates', digest, 'matched_trials.json')).size,
  };
};
const overheadAt = async (n) => {
  const setup = await confirmSetup(n);
  // The same command with one pair (the screen fails at once) measures start-up and the evaluator's start.
  const one = confirmRun(setup, setup.short, '-0.3');
  const many = confirmRun(setup, setup.cand, 'by-lane:0.3,0.1,0.3');
  return {one, many, perPair: (many.ms - one.ms) / (many.pairs - one.pairs)};
};
const small200 = await overheadAt(200);
const large2000 = await overheadAt(2000);
rows.push({
  measure: 'overhead per matched pair (persistent evaluator)',
  value:
    `${small200.perPair.toFixed(2)} ms ((${(small200.many.ms / 1000).toFixed(2)} s for ` +
    `${small200.many.pairs} pairs − ${(small200.one.ms / 1000).toFixed(2)} s for ${small200.one.pairs}) ` +
    `/ ${small200.many.pairs - small200.one.pairs})`,
  target: '<= 5 ms',
  ok: small200.perPair <= 5 && small200.many.pairs >= 200,
  metric: small200.perPair,
  better: 'lower',
  command:
    'autoctx confirm --evaluator-mode persistent: 203 pairs (200 confirmation) against 1, each pair ' +
    'flushed to the run journal',
});
const growth = large2000.perPair / small200.perPair;
rows.push({
  measure: 'per-pair overhead at 2,000 pairs / at 200 pairs',
  value:
    `${growth.toFixed(2)} (${large2000.perPair.toFixed(2)} ms at ${large2000.many.pairs} pairs, ` +
    `${small200.perPair.toFixed(2)} ms at ${small200.many.pairs})`,
  target: '<= 1.2',
  ok: growth <= 1.2 && large2000.many.pairs >= 2000,
  metric: growth,
  better: 'lower',
  command: 'the row above with 2,000 confirmation pairs, divided by it with 200, in one run',
});
const mb = (b) => `${(b / 1048576).toFixed(2)} MiB`;
rows.push({
  measure: 'bytes written by the 2,000-pair confirm',
  value:
    `${mb(large2000.many.io.write_bytes)} to storage ` +
    `(${(large2000.many.io.write_bytes / large2000.many.pairs / 1024).toFixed(1)} KiB per pair; 200 ` +
    `pairs: ${(small200.many.io.write_bytes / small200.many.pairs / 1024).toFixed(1)} KiB per pair); ` +
    `envelope ${mb(large2000.many.envelope)}; ${mb(large2000.many.io.wchar)} through write calls, the ` +
    `evaluator's pipe included`,
  target: 'none (shown)',
  ok: null,
  metric: large2000.many.io.write_bytes / large2000.many.pairs,
  better: 'lower',
  command: "write_bytes of autoctx's own process (/proc/self/io at exit), the same run",
});

// 7. verify over a generated tree of 1,000 bundles, as a ratio of its throughput to sha256sum over the same bytes.
// Two shapes: bundles of the build row's shape (50 components of 2 KB), the measure; and small bundles
// (4 components of 2 KB), where the fixed start-up of Node and oclif dominates and which shows that cost.
const verifyTree = async (name, componentCount) => {
  const vk = path.join(work, `${name}-tree`);
  const files = await makeVerifyTree({init, propose, tree: vk, source: path.join(work, `${name}-src`), componentCount});
  const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
  const listFile = path.join(work, `${name}-files.txt`);
  fs.writeFileSync(listFile, files.join('\0'));
  // In one process: verify as the CLI runs it, against reading and hashing every file with Node.
  const floor = () => {
    for (const f of files) createHash('sha256').update(fs.readFileSync(f)).digest('hex');
  };
  const inProcess = async () => {
    const r = await verifyInParallel({knowledge: vk});
    if (r.errors.length > 0) throw new Error(`the verify bench tree has errors: ${r.errors[0].code}`);
  };
  const [floorMs, inProcessMs] = await alternate([floor, inProcess]);
  const [verifyMs, shaMs] = timeCommands(
    [
      [process.execPath, [path.join(root, 'bin/run.js'), 'verify', '--knowledge', vk, '--json']],
      ['sh', ['-c', `xargs -0 sha256sum < '${listFile}' > /dev/null`]],
    ],
    5,
  );
  fs.rmSync(vk, {recursive: true, force: true});
  return {verifyMs, shaMs, bytes, files: files.length, throughput: shaMs / verifyMs, floorMs, inProcessMs};
};
const big = await verifyTree('verify-50x2k', 50);
const nearFloor = big.inProcessMs / big.floorMs;
rows.push({
  measure: 'verify / a Node read-and-SHA-256 of the same files, in one process',
  value:
    `${nearFloor.toFixed(2)} (verify ${big.inProcessMs.toFixed(0)} ms, read + SHA-256 ` +
    `${big.floorMs.toFixed(0)} ms, ${big.files} files, ${(big.bytes / 1048576).toFixed(1)} MiB)`,
  target: '<= 3',
  ok: nearFloor <= 3,
  metric: nearFloor,
  better: 'lower',
  command:
    'verifyInParallel (what autoctx verify runs) over 1,000 bundles of 50 x 2 KB  vs  fs.readFileSync + ' +
    'createHash per file (median of 7, alternating)',
});
rows.push({
  measure: 'verify throughput / sha256sum throughput (weak anchor)',
  value:
    `${big.throughput.toFixed(2)} (${(big.bytes / 1048576).toFixed(1)} MiB in ${big.files} files: verify ` +
    `${big.verifyMs.toFixed(0)} ms, sha256sum ${big.shaMs.toFixed(0)} ms)`,
  target: '>= 0.3',
  ok: big.throughput >= 0.3,
  metric: big.throughput,
  better: 'higher',
  command:
    'autoctx verify --knowledge <1,000 bundles of 50 x 2 KB>  vs  xargs sha256sum (coreutils sha256sum ' +
    'is about 4x slower than Node or openssl: a weak anchor; median of 5)',
});
const small = await verifyTree('verify-4x2k', 4);
rows.push({
  measure: 'verify throughput / sha256sum, small bundles (start-up bound)',
  value:
    `${small.throughput.toFixed(2)} (${(small.bytes / 1048576).toFixed(1)} MiB in ${small.files} files: ` +
    `verify ${small.verifyMs.toFixed(0)} ms, sha256sum ${small.shaMs.toFixed(0)} ms)`,
  target: 'none (shown)',
  ok: null,
  metric: small.throughput,
  better: 'higher',
  command: "the same over 1,000 bundles of 4 x 2 KB; Node and oclif start-up alone take about 130 ms of verify's time",
});

// 9. A writing command on a large tree: propose on a tree of 5,000 bundles against one of 10, wall time of
//    the CLI, each run proposing a new bundle (interleaved, median of 9). Nothing a writing command does may
//    walk the tree.
// The trees are built once by this bench's own build (the tree format is the same) and kept in
// $AUTOCTX_BENCH_CACHE when compare.js sets it, so that a base commit is timed on the same tree.
const ownBuild = (rel) => import(pathToFileURL(path.join(here, '..', rel)).href);
const proposeTree = async (name, count) => {
  const k = path.join(work, `${name}-tree`);
  const src = path.join(work, `${name}-src`);
  const writeSrc = (i) => {
    fs.mkdirSync(path.join(src, 'playbook'), {recursive: true});
    fs.writeFileSync(path.join(src, 'playbook/playbook.md'), `Playbook revision ${i}: check the disk first.\n`);
  };
  const cache = process.env.AUTOCTX_BENCH_CACHE ? path.join(process.env.AUTOCTX_BENCH_CACHE, `${name}-tree`) : null;
  if (cache && fs.existsSync(cache)) fs.cpSync(cache, k, {recursive: true});
  else {
    const build = {
      init: (await ownBuild('dist/core/common/init.js')).init,
      propose: (await ownBuild('dist/core/promotion/propose.js')).propose,
    };
    writeSrc(0);
    await build.init({knowledge: k, scenario: 'demo', from: src});
    for (let i = 1; i < count; i++) {
      writeSrc(i);
      await build.propose({knowledge: k, from: src, runId: `r${i}`});
    }
    if (cache) fs.cpSync(k, cache, {recursive: true});
  }
  return {k, src, writeSrc};
};
const smallTree = await proposeTree('propose-10', 10);
const largeTree = await proposeTree('propose-5000', 5000);
const proposeTimes = [[], []];
for (let r = 0; r < 11; r++)
  [smallTree, largeTree].forEach((t, i) => {
    t.writeSrc(`timed-${r}`);
    const s = performance.now();
    const res = spawnSync(
      process.execPath,
      [
        path.join(root, 'bin/run.js'),
        'propose',
        '--from',
        t.src,
        '--run-id',
        `timed-${r}`,
        '--knowledge',
        t.k,
        '--json',
      ],
      {encoding: 'utf8'},
    );
    const ms = performance.now() - s;
    if (res.status !== 0) throw new Error(`propose exited ${res.status}: ${res.stdout}${res.stderr}`);
    if (r > 1) proposeTimes[i].push(ms);
  });
const [propose10, propose5000] = proposeTimes.map(median);
rows.push({
  measure: 'propose on a 5,000-bundle tree / on a 10-bundle tree',
  value: `${(propose5000 / propose10).toFixed(2)} (${propose5000.toFixed(0)} ms / ${propose10.toFixed(0)} ms)`,
  target: '<= 1.2',
  ok: propose5000 / propose10 <= 1.2,
  metric: propose5000 / propose10,
  better: 'lower',
  command: 'node bin/run.js propose --from <a new revision> on each tree (interleaved, median of 9)',
});
fs.rmSync(largeTree.k, {recursive: true, force: true});

// 10. Canonical JSON and its digest of about 10 MB of objects whose keys are not in order, against
//     JSON.stringify + SHA-256 of the same value.
const unsortedRows = [];
for (let i = 0; unsortedRows.length < 40000; i++)
  unsortedRows.push({
    zeta: `row ${i}`,
    alpha: i * 0.5,
    mid: {y: [i, i + 1, 'x'], b: true, a: null},
    beta: 'lorem ipsum dolor sit amet '.repeat(6),
    id: i,
  });
const unsorted = {rows: unsortedRows, meta: {z: 1, a: 2}};
const unsortedBytes = JSON.stringify(unsorted).length;
const [canonicalMs, stringifyMs] = await alternate(
  [() => stableDigest(unsorted), () => createHash('sha256').update(JSON.stringify(unsorted)).digest('hex')],
  15,
);
rows.push({
  measure: 'canonical JSON + digest of unsorted objects / JSON.stringify + SHA-256',
  value:
    `${(canonicalMs / stringifyMs).toFixed(2)} (${canonicalMs.toFixed(1)} ms / ${stringifyMs.toFixed(1)} ` +
    `ms, ${(unsortedBytes / 1048576).toFixed(1)} MiB)`,
  target: '<= 2',
  ok: canonicalMs / stringifyMs <= 2,
  metric: canonicalMs / stringifyMs,
  better: 'lower',
  command:
    'stableDigest vs createHash(sha256).update(JSON.stringify(v)) over 40,000 rows of 5 keys (one nested ' +
    'object) out of order (median of 15, alternating)',
});

// 11. The bootstrap package: render in process, prepare as a whole process, recall over 2,000 components.
//     A base that predates it has no such rows.
if (fs.existsSync(path.join(root, 'dist/public/bootstrap.js'))) {
  const {renderPackage, recall} = await load('dist/public/bootstrap.js');
  const {tagAdd} = await load('dist/core/delivery/curation.js');
  const seven = Array.from({length: 7}, (_, i) => ({
    kind: 'component',
    scenario: 'bench',
    component_kind: 'hints',
    component_key: `item-${i}`,
    component_digest: String(i).repeat(64),
    handoff_id: null,
    revision: null,
    handoff_digest: null,
    body: 'Quota warnings go to the account owner; check the tray icon first. '.repeat(40).slice(0, 2000),
  }));
  const renderMs = timeIt(() => renderPackage(seven, {maxBytes: 8192}), {runs: 500, warmup: 50});
  rows.push({
    measure: 'bootstrap render: seven items of 2,000 bytes, in process',
    value: `${renderMs.toFixed(3)} ms`,
    target: '< 1 ms',
    ok: renderMs < 1,
    metric: renderMs,
    better: 'lower',
    command: 'renderPackage(7 candidates of 2,000 bytes, {maxBytes: 8192}) (median of 500)',
  });
  // The example's tree, two components tagged, as the quick start leaves it.
  const bk = path.join(work, 'bootstrap-knowledge');
  await init({knowledge: bk, scenario: 'demo', from: path.join(root, 'knowledge-example/demo/candidate-better')});
  const active = JSON.parse(fs.readFileSync(path.join(bk, 'demo/context_bundles/active.json'), 'utf8')).bundle_digest;
  const manifest = JSON.parse(fs.readFileSync(path.join(bk, 'demo/context_bundles/bundles', `${active}.json`), 'utf8'));
  for (const c of manifest.components.filter((x) => x.kind === 'playbook' || x.kind === 'hints'))
    await tagAdd({knowledge: bk, digest: c.digest});
  const prepareArgs = [
    path.join(root, 'bin/run.js'),
    'bootstrap',
    'prepare',
    '--integration',
    'claude-code',
    '--lifecycle',
    'startup',
    '--enabled',
    '--json',
    '--knowledge',
    bk,
  ];
  const [nodeMs2, prepareMs] = timeCommands([
    [process.execPath, ['-e', '0']],
    [process.execPath, prepareArgs],
  ]);
  rows.push({
    measure: 'bootstrap prepare, whole process / node -e 0',
    value: `${(prepareMs / nodeMs2).toFixed(2)}x (${prepareMs.toFixed(0)} ms / ${nodeMs2.toFixed(0)} ms)`,
    target: '<= 2.5x',
    ok: prepareMs / nodeMs2 <= 2.5,
    metric: prepareMs / nodeMs2,
    better: 'lower',
    command:
      'node bin/run.js bootstrap prepare --enabled --json on the example (a pending receipt each run)  vs  ' +
      'node -e 0 (median of 15, interleaved)',
  });
  // The hook's whole process: a ready package (a new session each run) and a disabled one, against node -e 0.
  if (fs.existsSync(path.join(root, 'bin/autoctx-hook.js'))) {
    const cfg = (enabled) => {
      const dir = path.join(work, `hook-config-${enabled}`);
      fs.mkdirSync(path.join(dir, 'autoctx'), {recursive: true});
      fs.writeFileSync(
        path.join(dir, 'autoctx/config.json'),
        JSON.stringify({schema_version: 1, hooks: {projects: {[work]: {knowledge: bk, scenario: 'demo', enabled}}}}),
      );
      return {...process.env, XDG_CONFIG_HOME: dir};
    };
    const on = cfg(true);
    const off = cfg(false);
    const [n0, ready, disabled] = hookTimes([on, off], 'bench', [true, false]);
    for (const [label, ms] of [
      ['ready package', ready],
      ['disabled', disabled],
    ]) {
      rows.push({
        measure: `hook session-start, whole process / node -e 0 (${label})`,
        value: `${(ms / n0).toFixed(2)}x (${ms.toFixed(0)} ms / ${n0.toFixed(0)} ms)`,
        target: '<= 2x',
        ok: ms / n0 <= 2,
        metric: ms / n0,
        better: 'lower',
        command:
          `node bin/autoctx-hook.js session-start --host claude-code, host JSON on stdin, the example tree ` +
          `(${label === 'disabled' ? 'opt-in off' : 'a new session each run: prepare, claim, print, save'})  ` +
          `vs  node -e 0 (median of 15, interleaved)`,
      });
    }
    // The same hook on a state area that has grown with history (12,000 files: 4,000 each of receipts, session
    // states and sealed evidence packages, all recent) against a fresh copy of the tree: housekeeping, not history.
    const grown = (name) => {
      const k = path.join(work, name);
      fs.cpSync(bk, k, {recursive: true});
      fs.rmSync(path.join(k, '.state'), {recursive: true, force: true});
      const dir = path.join(work, `hook-config-${name}`);
      fs.mkdirSync(path.join(dir, 'autoctx'), {recursive: true});
      fs.writeFileSync(
        path.join(dir, 'autoctx/config.json'),
        JSON.stringify({
          schema_version: 1,
          hooks: {projects: {[work]: {knowledge: k, scenario: 'demo', enabled: true}}},
        }),
      );
      const env = {...process.env, XDG_CONFIG_HOME: dir};
      const p = spawnSync(
        process.execPath,
        [path.join(root, 'bin/autoctx-hook.js'), 'session-start', '--host', 'claude-code'],
        {
          input: JSON.stringify({
            session_id: `${name}-seed`,
            cwd: work,
            hook_event_name: 'SessionStart',
            source: 'startup',
          }),
          env,
          encoding: 'utf8',
        },
      );
      if (!p.stdout.startsWith('{"hookSpecificOutput"'))
        throw new Error(`hook seed run failed: ${p.stdout}${p.stderr}`);
      return {k, env};
    };
    const small = grown('state-small');
    const large = grown('state-large');
    const state = path.join(large.k, '.state');
    let files = 0;
    for (const folder of [
      path.join(state, 'bootstrap/receipts'),
      path.join(state, 'hosts/claude-code'),
      ...fs.readdirSync(path.join(state, 'evidence')).map((d) => path.join(state, 'evidence', d, 'packages')),
    ]) {
      const [one] = fs.readdirSync(folder).filter((f) => f.endsWith('.json'));
      if (!one) continue;
      const bytes = fs.readFileSync(path.join(folder, one));
      const hex = one.match(/[0-9a-f]{32,}/)[0];
      for (let i = 0; i < 4000; i++)
        fs.writeFileSync(
          path.join(
            folder,
            one.replace(hex, createHash('sha256').update(`${folder}${i}`).digest('hex').slice(0, hex.length)),
          ),
          bytes,
          {mode: 0o600},
        );
      files += 4000;
    }
    const [, smallMs, largeMs] = hookTimes([small.env, large.env], 'bench-state', [true, true]);
    rows.push({
      measure: 'hook session-start, state area of 12,000 files / fresh state area',
      value: `${(largeMs / smallMs).toFixed(2)} (${largeMs.toFixed(0)} ms / ${smallMs.toFixed(0)} ms)`,
      target: '<= 1.2',
      ok: largeMs / smallMs <= 1.2,
      metric: largeMs / smallMs,
      better: 'lower',
      command:
        `node bin/autoctx-hook.js session-start on the example tree with ${files.toLocaleString('en-US')} ` +
        `more files in .state/ (receipts, session states, evidence packages, all recent)  vs  the same tree ` +
        `with a fresh .state/ (median of 15, interleaved)`,
    });
  }
  // 2,000 components of 2 KB in one serving bundle.
  const rk = path.join(work, 'recall-knowledge');
  const rsrc = path.join(work, 'recall-src');
  const words = [
    'quota',
    'sync',
    'tray',
    'disk',
    'folder',
    'account',
    'owner',
    'settings',
    'path',
    'version',
    'conflict',
    'upload',
    'share',
    'device',
    'login',
  ];
  fs.mkdirSync(path.join(rsrc, 'hints'), {recursive: true});
  for (let i = 0; i < 2000; i++) {
    const body = Array.from({length: 300}, (_, j) => words[(i * 7 + j * 13 + ((i * j) % 11)) % words.length]).join(' ');
    fs.writeFileSync(path.join(rsrc, 'hints', `note-${String(i).padStart(4, '0')}.md`), `${body}\n`.slice(0, 2048));
  }
  await init({knowledge: rk, scenario: 'demo', from: rsrc});
  const recallMs = timeIt(() => recall({knowledge: rk, query: 'quota owner settings'}), {runs: 7, warmup: 2});
  rows.push({
    measure: 'recall over 2,000 components of 2 KB, in process',
    value: `${recallMs.toFixed(0)} ms`,
    target: 'shown',
    ok: null,
    metric: recallMs,
    better: 'lower',
    command:
      'recall({query: "quota owner settings"}) on one serving bundle of 2,000 hints of 2 KB: read, index ' +
      'with MiniSearch, rank, render (median of 7)',
  });
}

// 12. Routing: the in-process decision against one SHA-256 of the same input, and `autoctx route` as a whole process.
//     A base that predates it has no such rows.
if (fs.existsSync(path.join(root, 'dist/public/release.js'))) {
  const {decideRoute, bucketText, CANARY_ALGORITHM} = await load('dist/public/release.js');
  const {hash} = await import('node:crypto');
  const snapshot = {
    scenario: 'demo',
    scope: 'global',
    active: {version: 'v1', bundle_digest: 'a'.repeat(64), source: 'global'},
    canaries: [
      {
        version: 'v2',
        bundle_digest: 'b'.repeat(64),
        basis_points: 1000,
        tenants: ['acme', 'globex'],
        resource_families: ['repo:acme/'],
        salt: 'v2',
        runnable: true,
      },
    ],
    registry_problem: null,
  };
  const users = Array.from({length: 1000}, (_, i) => `user-${i}@example.test`);
  const texts = users.map((u) => bucketText(CANARY_ALGORITHM, ['global', 'demo', 'v2', 'user', u]));
  let sink = 0;
  const decideMs = timeIt(
    () => {
      for (const user of users)
        sink +=
          decideRoute(snapshot, {user, tenant: 'acme', resourceAddress: 'repo:acme/api'}).state === 'CANARY' ? 1 : 0;
    },
    {runs: 200, warmup: 20},
  );
  const hashMs = timeIt(
    () => {
      for (const t of texts) sink += hash('sha256', t, 'buffer')[0];
    },
    {runs: 200, warmup: 20},
  );
  rows.push({
    measure: 'route decision in process / one sha256 of its input',
    value:
      `${(decideMs / hashMs).toFixed(2)}x (${((decideMs / users.length) * 1000).toFixed(2)} µs / ` +
      `${((hashMs / users.length) * 1000).toFixed(2)} µs)`,
    target: '<= 3x',
    ok: decideMs / hashMs <= 3,
    metric: decideMs / hashMs,
    better: 'lower',
    command:
      `decideRoute(snapshot with a tenant- and resource-filtered 10% canary, {user, tenant, ` +
      `resourceAddress}) vs crypto.hash('sha256', the bucket text) for 1,000 users (median of 200; ` +
      `${sink > 0 ? 'results used' : ''})`,
  });
  const rk2 = path.join(work, 'route-knowledge');
  await init({knowledge: rk2, scenario: 'demo', from: path.join(root, 'knowledge-example/demo/baseline')});
  const {releaseName} = await load('dist/core/release/release.js');
  const activeDigest = JSON.parse(
    fs.readFileSync(path.join(rk2, 'demo/context_bundles/active.json'), 'utf8'),
  ).bundle_digest;
  await releaseName({knowledge: rk2, version: 'v1', digest: activeDigest, actor: 'bench'});
  const [nodeMs3, routeMs] = timeCommands([
    [process.execPath, ['-e', '0']],
    [process.execPath, [path.join(root, 'bin/run.js'), 'route', '--user', 'alice', '--json', '--knowledge', rk2]],
  ]);
  // The hook's session start on a tree with a 50% canary (routing included): the baseline v1 ACTIVE,
  // the better candidate confirmed and released as v2; each playbook tagged, so either bundle gives a package.
  const ck = path.join(work, 'canary-knowledge');
  const ex = (...p) => path.join(root, 'knowledge-example', ...p);
  const cliIn = (...a) => {
    const r = spawnSync(process.execPath, [path.join(root, 'bin/run.js'), ...a, '--knowledge', ck], {encoding: 'utf8'});
    if (r.status !== 0) throw new Error(`${a.join(' ')}: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  cliIn('init', '--scenario', 'demo', '--from', ex('demo/baseline'));
  const cBase = JSON.parse(fs.readFileSync(path.join(ck, 'demo/context_bundles/active.json'), 'utf8')).bundle_digest;
  const cCand = JSON.parse(cliIn('propose', '--from', ex('demo/candidate-better'), '--json')).bundle_digest;
  cliIn(
    'confirm',
    cCand,
    '--evaluator',
    `node ${ex('evaluator.js')}`,
    '--evaluator-mode',
    'persistent',
    '--fixtures',
    ex('demo/fixtures.jsonl'),
    '--quiet',
  );
  cliIn('release', 'name', 'v1', cBase);
  cliIn('release', 'name', 'v2', cCand);
  cliIn('release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'bench');
  cliIn('release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '50', '--rationale', 'bench');
  for (const d of [cBase, cCand])
    cliIn(
      'tag',
      'add',
      JSON.parse(cliIn('bundle', 'show', d, '--json')).manifest.components.find((x) => x.kind === 'playbook').digest,
    );
  const cfgDir = path.join(work, 'hook-config-canary');
  fs.mkdirSync(path.join(cfgDir, 'autoctx'), {recursive: true});
  fs.writeFileSync(
    path.join(cfgDir, 'autoctx/config.json'),
    JSON.stringify({schema_version: 1, hooks: {projects: {[work]: {knowledge: ck, scenario: 'demo', enabled: true}}}}),
  );
  const [cn0, cHook] = hookTimes([{...process.env, XDG_CONFIG_HOME: cfgDir}], 'bench-canary', [true]);
  rows.push({
    measure: 'hook session-start, whole process / node -e 0 (routed, a 50% canary)',
    value: `${(cHook / cn0).toFixed(2)}x (${cHook.toFixed(0)} ms / ${cn0.toFixed(0)} ms)`,
    target: '<= 2x',
    ok: cHook / cn0 <= 2,
    metric: cHook / cn0,
    better: 'lower',
    command:
      "node bin/autoctx-hook.js session-start on the quick start's baseline (v1 ACTIVE) with the better " +
      'candidate a 50% canary (v2), a new session each run  vs  node -e 0 (median of 15, interleaved)',
  });
  rows.push({
    measure: 'autoctx route, whole process / node -e 0',
    value: `${(routeMs / nodeMs3).toFixed(2)}x (${routeMs.toFixed(0)} ms / ${nodeMs3.toFixed(0)} ms)`,
    target: '<= 2.5x',
    ok: routeMs / nodeMs3 <= 2.5,
    metric: routeMs / nodeMs3,
    better: 'lower',
    command:
      "node bin/run.js route --user alice --json on the quick start's baseline named v1  vs  node -e 0 " +
      '(median of 15, interleaved)',
  });
}

/**
 * Medians of 15 runs (after 2 warm-ups) of `node -e 0`, then of the hook's session start with each environment
 * (a new session each run), interleaved; `packaged[i]`: that environment's run must print a package.
 */
function hookTimes(envs, prefix, packaged) {
  const hookBin = path.join(root, 'bin/autoctx-hook.js');
  const times = [[], ...envs.map(() => [])];
  for (let r = 0; r < 17; r++) {
    const input = JSON.stringify({
      session_id: `${prefix}-${r}`,
      cwd: work,
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    for (const [i, args, env] of [
      [0, ['-e', '0'], process.env],
      ...envs.map((e, j) => [j + 1, [hookBin, 'session-start', '--host', 'claude-code'], e]),
    ]) {
      const s0 = performance.now();
      const p = spawnSync(process.execPath, args, {input, env, encoding: 'utf8'});
      const ms = performance.now() - s0;
      if (p.status !== 0 || (i > 0 && packaged[i - 1] && !p.stdout.startsWith('{"hookSpecificOutput"')))
        throw new Error(`hook bench run failed: ${p.stdout}${p.stderr}`);
      if (r >= 2) times[i].push(ms);
    }
  }
  return times.map(median);
}

// 13. Signatures: verify of the example tree signed, as a ratio to the same tree unsigned
// (in one process, interleaved), and the time to sign one record through ssh-keygen -Y sign.
// (A base commit from before signing has no such rows.)
if (fs.existsSync(inTree('dist/core/signing/signing-history.js'))) {
  const {verify} = await load('dist/core/common/verify.js');
  const {signingStart} = await load('dist/core/signing/signing-history.js');
  const {rollback} = await load('dist/core/rollback/rollback.js');
  const {signDigest} = await load('dist/core/signing/signing-key.js');
  // The cold-start row's tree (the quick start's baseline and two proposals), twice.
  const unsignedTree = path.join(work, 'sig-unsigned', 'knowledge');
  const signedTree = path.join(work, 'sig-signed', 'knowledge');
  for (const k of [unsignedTree, signedTree]) fs.cpSync(knowledge, k, {recursive: true});
  const keyFile = path.join(work, 'sig-key');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bench', '-f', keyFile]);
  const signers = path.join(work, 'sig-allowed');
  fs.writeFileSync(
    signers,
    `bench@x ${fs.readFileSync(`${keyFile}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')}\n`,
  );
  await signingStart({knowledge: signedTree, from: signers, signingKey: keyFile, actor: 'bench@x'});
  // Records made under signing, on both trees alike: three rollback executions (refused: the baseline has no target),
  // signed on one.
  for (const k of [unsignedTree, signedTree])
    for (const why of ['bench one', 'bench two', 'bench three'])
      await rollback({
        knowledge: k,
        rationale: why,
        actor: 'bench@x',
        ...(k === signedTree ? {signingKey: keyFile} : {}),
      });
  const check = verify({knowledge: signedTree, allowedSigners: signers});
  if (check.errors.length > 0) throw new Error(`the signed bench tree has errors: ${check.errors[0].code}`);
  const times = {unsigned: [], signed: []};
  for (let i = 0; i < 15; i++) {
    for (const [name, k, anchor] of [
      ['unsigned', unsignedTree, undefined],
      ['signed', signedTree, signers],
    ]) {
      const t0 = performance.now();
      verify({knowledge: k, allowedSigners: anchor});
      times[name].push(performance.now() - t0);
    }
  }
  const signedRatio = median(times.signed) / median(times.unsigned);
  rows.push({
    measure: 'verify of the example tree signed / unsigned',
    value:
      `${signedRatio.toFixed(2)}x (${median(times.signed).toFixed(1)} ms / ` +
      `${median(times.unsigned).toFixed(1)} ms)`,
    target: '<= 1.5x',
    ok: signedRatio <= 1.5,
    metric: signedRatio,
    better: 'lower',
    command:
      "verify({knowledge, allowedSigners}) in process over the quick start's baseline and two proposals " +
      'with signing started and three signed rollback records  vs  the same tree unsigned (median of 15, ' +
      'interleaved)',
  });
  const key = {file: keyFile, agent: false};
  const signTimes = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    signDigest(key, 'rollback-execution', 'a'.repeat(64));
    signTimes.push(performance.now() - t0);
  }
  rows.push({
    measure: 'sign one record (ssh-keygen -Y sign, Ed25519)',
    value: `${median(signTimes).toFixed(1)} ms`,
    target: 'shown',
    ok: true,
    metric: median(signTimes),
    better: 'lower',
    command:
      'signDigest: one ssh-keygen -Y sign -n autoctx process per record, from an unencrypted key file (median of 15)',
  });
}

// 14. The prompt inspector: packages per second over packages of the example's size (its
// bootstrap package, sealed as the hooks seal it), in one process.
if (fs.existsSync(inTree('dist/core/inspection/inspect.js'))) {
  const {evidenceSeal} = await load('dist/core/inspection/evidence.js');
  const {inspectRun} = await load('dist/core/inspection/inspect.js');
  const {prepare} = await load('dist/core/delivery/bootstrap.js');
  const ik = path.join(work, 'inspect', 'knowledge');
  fs.cpSync(knowledge, ik, {recursive: true});
  // The quick start tags the serving playbook and hints: the package the hook delivers.
  const {tagAdd} = await load('dist/core/delivery/curation.js');
  const activeBundle = JSON.parse(
    fs.readFileSync(path.join(ik, 'demo/context_bundles/active.json'), 'utf8'),
  ).bundle_digest;
  const served = JSON.parse(
    fs.readFileSync(path.join(ik, `demo/context_bundles/bundles/${activeBundle}.json`), 'utf8'),
  ).components;
  for (const kind of ['playbook', 'hints'])
    await tagAdd({knowledge: ik, digest: served.find((c) => c.kind === kind).digest});
  const active = JSON.parse(fs.readFileSync(path.join(ik, 'demo/context_bundles/active.json'), 'utf8')).bundle_digest;
  const count = 600;
  let content = '';
  for (let i = 0; i < count; i++) {
    // Each package as a hook delivers it: prepared with its receipt, whose id is the correlation id (the
    // inspector holds the package to the items the receipt names).
    const delivered = await prepare({
      knowledge: ik,
      scenario: 'demo',
      enabled: true,
      lifecycle: 'startup',
      integration: 'bench',
      eventId: `bench-${i}`,
    });
    content = delivered.content;
    const file = path.join(work, 'inspect', `p${i}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({
        schema: 'autoctx.evidence-package.v1',
        scenario: 'demo',
        correlation_id: delivered.receipt.receipt_id,
        bundle_digest: active,
        layout: 'autoctx-bootstrap-v1',
        system_prompt: '',
        user_prompt: delivered.content,
      }),
    );
    await evidenceSeal({knowledge: ik, from: file});
  }
  const t0 = performance.now();
  const r = await inspectRun({knowledge: ik, batch: count});
  const ms = performance.now() - t0;
  if (r.inspected.length !== count || r.inspected.some((x) => x.verdict !== 'PASS'))
    throw new Error('the inspector bench packages did not all PASS');
  const perSecond = count / (ms / 1000);
  rows.push({
    measure: "prompt inspector throughput, packages of the example's size",
    value:
      `${perSecond.toFixed(0)} packages/s (${count} in ${ms.toFixed(0)} ms, ${Buffer.byteLength(content)} ` +
      `bytes each)`,
    target: '>= 500/s',
    ok: perSecond >= 500,
    metric: perSecond,
    better: 'higher',
    command:
      "inspectRun({batch: 600}) in process over 600 sealed copies of the example's bootstrap package: " +
      'read, integrity check, inspect against the bundle, write the result',
  });
}

// 15. verify and status on a tree whose state changes came through 50 merged branches, against the same changes
//     made on one branch (a base that predates the teamwork's .gitattributes has no such rows).
await mergedBranchRows();

async function mergedBranchRows() {
  if (!fs.existsSync(inTree('dist/store/kinds/common/gitattributes.js'))) return;
  const {evaluateCandidate} = await load('dist/core/evaluation/evaluate.js');
  const {promote} = await load('dist/core/promotion/promote.js');
  const {rollback} = await load('dist/core/rollback/rollback.js');
  const {status} = await load('dist/core/common/status.js');
  const ops = {
    init,
    // A new revision of the playbook, proposed, confirmed against the bundle that serves (the baseline, after each
    // round's rollback) with the test suite's fake evaluator, and promoted.
    async promote(k, from, i) {
      const {bundle_digest: digest} = await propose({knowledge: k, from, runId: `round-${i}`});
      const confirmed = await evaluateCandidate({
        knowledge: k,
        candidate: digest,
        mode: 'confirm',
        evaluator: `${process.execPath} ${path.join(root, 'test/fixtures/evaluators/fake.js')}`,
        evaluatorMode: 'persistent',
        fixtures: path.join(root, 'test/fixtures/fixtures-12.jsonl'),
        policyFile: path.join(root, 'test/fixtures/policy-small.json'),
      });
      if (confirmed.status !== 'confirmed') throw new Error(`round ${i}: the candidate was ${confirmed.status}`);
      const promoted = await promote({knowledge: k, candidate: digest, actor: 'bench'});
      if (promoted.status !== 'promoted') throw new Error(`round ${i}: promote said ${promoted.status}`);
      return digest;
    },
    async rollback(k, i) {
      const r = await rollback({knowledge: k, rationale: `round ${i}`, actor: 'bench'});
      if (r.status !== 'rolled_back') throw new Error(`round ${i}: the rollback was ${r.status}`);
    },
  };
  const rounds = 50;
  const single = await makeTeamTree({dir: path.join(work, 'one-branch'), rounds, merged: false, ops});
  const merged = await makeTeamTree({dir: path.join(work, 'merged-branches'), rounds, merged: true, ops});
  // The same state changes, the same files; only git's history differs (checked, so the ratio compares like with like).
  const merges = (k) => Number(gitIn(path.dirname(k), ['rev-list', '--merges', '--count', 'main']).trim());
  const commits = (k) => Number(gitIn(path.dirname(k), ['rev-list', '--no-merges', '--count', 'main']).trim());
  const filesOf = (k) => gitIn(path.dirname(k), ['ls-files', 'knowledge']).trim().split('\n').length;
  if (merges(single) !== 0 || merges(merged) !== rounds || commits(single) !== commits(merged))
    throw new Error('the merged-branches bench trees are not the shape they should be');
  if (filesOf(single) !== filesOf(merged)) throw new Error('the merged-branches bench trees hold different files');
  for (const k of [single, merged]) {
    if (gitIn(path.dirname(k), ['status', '--porcelain', '--', 'knowledge']).trim() !== '')
      throw new Error(`${k}: not a clean tree`);
    const v = await verifyInParallel({knowledge: k});
    if (v.errors.length > 0 || v.warnings.length > 0)
      throw new Error(`${k}: verify found ${(v.errors[0] ?? v.warnings[0]).code}`);
  }
  const [verifyOne, verifyMerged] = await abba(
    () => verifyInParallel({knowledge: single}),
    () => verifyInParallel({knowledge: merged}),
  );
  const [statusOne, statusMerged] = await abba(
    () => status({knowledge: single}),
    () => status({knowledge: merged}),
  );
  const shape = `${filesOf(merged)} files, ${commits(merged) - 1} commits of promotions and rollbacks`;
  for (const [name, one, many] of [
    ['verify', verifyOne, verifyMerged],
    ['status', statusOne, statusMerged],
  ])
    rows.push({
      measure: `${name}, 50 merged branches / the same changes on one branch`,
      value: `${(many / one).toFixed(2)} (${many.toFixed(1)} ms / ${one.toFixed(1)} ms; ${shape})`,
      target: '<= 1.2',
      ok: many / one <= 1.2,
      metric: many / one,
      better: 'lower',
      command:
        `${name === 'verify' ? 'verifyInParallel (what autoctx verify runs)' : 'status (what autoctx status runs)'} ` +
        'in process on a git repository whose 50 rounds (propose, confirm, promote, commit; rollback, commit) ' +
        'were each made on a branch from main and merged with --no-ff, against one where they were made on main ' +
        '(median of 30: 15 rounds run in both orders)',
    });
}

// 8. Peak memory of the 100 MiB case: propose, materialize and verify a bundle with one 100 MiB component.
const mem = path.join(work, 'memory');
const peakOf = (args) => {
  const rssFile = path.join(mem, 'rss');
  const r = spawnSync(
    process.execPath,
    ['--import', path.join(root, 'test/helpers/max-rss.js'), path.join(root, 'bin/run.js'), ...args, '--json'],
    {encoding: 'utf8', env: {...process.env, AUTOCTX_MAX_RSS_FILE: rssFile}},
  );
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return {json: JSON.parse(r.stdout), peak: Number(fs.readFileSync(rssFile, 'utf8'))};
};
for (const [label, line] of [
  ['ASCII text', 'Check the disk "before" restarting;\tnote what you saw \\ and why.\n'],
  ['text beyond Latin-1', 'Check the disk before restarting \u2014 note what you saw \u00e9 \u{1F600}\n'],
]) {
  fs.rmSync(mem, {recursive: true, force: true});
  fs.mkdirSync(path.join(mem, 'base/playbook'), {recursive: true});
  fs.mkdirSync(path.join(mem, 'big/playbook'), {recursive: true});
  fs.writeFileSync(path.join(mem, 'base/playbook/playbook.md'), 'Be helpful.\n');
  const size = 100 * 1048576;
  fs.writeFileSync(
    path.join(mem, 'big/playbook/playbook.md'),
    Buffer.from(line.repeat(Math.ceil(size / Buffer.byteLength(line)))).subarray(0, size),
  );
  const mk = path.join(mem, 'knowledge');
  peakOf(['init', '--scenario', 'demo', '--from', path.join(mem, 'base'), '--knowledge', mk]);
  const p = peakOf(['propose', '--from', path.join(mem, 'big'), '--knowledge', mk]);
  const m = peakOf(['bundle', 'materialize', p.json.bundle_digest, path.join(mem, 'out'), '--knowledge', mk]);
  const v = peakOf(['verify', '--knowledge', mk]);
  const worst = Math.max(p.peak, m.peak, v.peak) / size;
  rows.push({
    measure: `peak memory, 100 MiB component (${label})`,
    value:
      `${worst.toFixed(2)}x (propose ${(p.peak / size).toFixed(2)}x, materialize ` +
      `${(m.peak / size).toFixed(2)}x, verify ${(v.peak / size).toFixed(2)}x)`,
    target: '< 4x',
    ok: worst < 4,
    metric: worst,
    better: 'lower',
    command: 'autoctx propose / bundle materialize / verify, peak RSS from process.resourceUsage().maxRSS',
  });
}

await agentEvaluatorRows();

finish(`; canonical sample length ${canonicalJson(input).length} bytes`);

/**
 * The agent evaluator's own overhead per trial (autoctx evaluator agent): a 1 MiB task folder prepared once, then per
 * trial its copy into a fresh workspace and the re-hash, the clean session home with autoctx's hooks, the host's
 * configuration, the workspace diff, the checker (`true`) and the artifacts, less the host's own run (a shell script
 * standing in for codex that prints its usage and exits; the evaluator measures its run as latency_ms).
 */
async function agentEvaluatorRows() {
  if (!fs.existsSync(inTree('dist/core/evaluation/agent/serve.js'))) return;
  const {taskTreeDigest} = await load('dist/core/evaluation/agent/serve.js');
  const {fixtureDigest} = await load('dist/model/evaluation/fixtures.js');
  const dir = path.join(work, 'agent');
  const k = path.join(dir, 'knowledge');
  await init({knowledge: k, scenario: 'demo', from: path.join(root, 'knowledge-example/demo/baseline')});
  const active = JSON.parse(fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8')).bundle_digest;
  // 1 MiB: 64 files of 16 KiB in 8 folders.
  const tasks = path.join(dir, 'tasks');
  for (let i = 0; i < 64; i++) {
    const file = path.join(tasks, 'big', `d${i % 8}`, `f${i}.txt`);
    fs.mkdirSync(path.dirname(file), {recursive: true});
    fs.writeFileSync(file, `${String(i).padStart(4, '0')} ${'x'.repeat(16 * 1024 - 6)}\n`);
  }
  const host = path.join(dir, 'host.sh');
  fs.writeFileSync(
    host,
    '#!/bin/sh\necho \'{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}\'\n',
    {mode: 0o755},
  );
  const initial_state = {
    agent_task: 1,
    dir: 'big',
    dir_digest: taskTreeDigest(path.join(tasks, 'big')).tree_digest,
    checker: {command: ['true']},
  };
  const observation = {prompt: 'Do the task.'};
  const request = (i) => ({
    schema: 'autoctx.evaluation-request.v1',
    request_id: `r${i}`,
    arm: i % 2 ? 'candidate' : 'incumbent',
    scenario: 'demo',
    bundle_digest: active,
    bundle_dir: dir,
    evaluator_epoch: 'e',
    cohort: 'c',
    lane: 'confirmation',
    fixture: 'big',
    fixture_digest: fixtureDigest(initial_state, observation),
    seed: i,
    plan_digest: 'c'.repeat(64),
    initial_state,
    observation,
  });
  // The evaluator as autoctx runs it in persistent mode: one process, a request at a time on its stdin.
  const runs = 40;
  const perTrial = [];
  const child = spawn(
    process.execPath,
    [path.join(root, 'bin/run.js'), 'evaluator', 'agent', '--host', 'codex', '--tasks', tasks, '--host-bin', host],
    {env: {...process.env, AUTOCTX_STATE_DIR: path.join(k, '.state')}, stdio: ['pipe', 'pipe', 'inherit']},
  );
  const answers = createInterface({input: child.stdout})[Symbol.asyncIterator]();
  for (let i = 0; i <= runs; i++) {
    const started = performance.now();
    child.stdin.write(`${JSON.stringify(request(i))}\n`);
    const next = await answers.next();
    if (next.done) throw new Error('the agent evaluator ended before its answer');
    const answer = JSON.parse(next.value);
    // The first trial prepares the fixture and the session home once: not a trial's overhead.
    if (i > 0) perTrial.push(performance.now() - started - answer.metrics.latency_ms);
  }
  child.stdin.end();
  await new Promise((resolve) => child.on('close', resolve));
  const ms = median(perTrial);
  rows.push({
    measure: 'agent evaluator overhead per trial, 1 MiB task folder',
    value: `${ms.toFixed(1)} ms`,
    target: '<= 50 ms',
    ok: ms <= 50,
    metric: ms,
    better: 'lower',
    command:
      'autoctx evaluator agent --host codex, persistent, 40 trials of one prepared fixture (64 files, 1 MiB): ' +
      "wall time from request to answer less the host's run (a shell stub), median",
  });
}

/** Print the table, write the rows (--json), and remove the work folder. */
function finish(note = '') {
  printTable(rows);
  if (option('--json')) fs.writeFileSync(option('--json'), `${JSON.stringify(rows)}\n`);
  console.log(
    `\nmachine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}${note}`,
  );
  fs.rmSync(work, {recursive: true, force: true});
}
