import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {verify} from '../../src/core/common/verify.js';
import {runCli} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {FAKE, FIXTURES_12, POLICY_SMALL, readUnits, trialResult} from '../helpers/pipeline.js';
import {tempDir, writeSource} from '../helpers/tree.js';

const root = tempDir('autoctx-concurrency-');
afterAll(() => fs.rmSync(root, {recursive: true, force: true}));
const BIN = path.join(PROJECT_ROOT, 'bin/run.js');
const evaluation = [
  '--evaluator',
  `node ${FAKE}`,
  '--evaluator-mode',
  'persistent',
  '--fixtures',
  FIXTURES_12,
  '--policy',
  POLICY_SMALL,
  '--quiet',
];
const ENV = {FAKE_DELTA: '0.3', FAKE_NOISE: '0.02'};

function run(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{status: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {env: {...process.env, NO_COLOR: '1', ...ENV, ...env}});
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({status, stdout, stderr}));
  });
}

function tree(name: string): string {
  const k = path.join(root, name, 'knowledge');
  const base = writeSource(path.join(root, name, 'base'), {'playbook/playbook.md': 'Be helpful.\n'});
  expect(runCli(['init', '--scenario', 'demo', '--from', base, '--knowledge', k, '--json']).status).toBe(0);
  return k;
}

function propose(k: string, i: number): string {
  const src = writeSource(path.join(path.dirname(k), `c${i}`), {'playbook/playbook.md': `Be helpful, variant ${i}.\n`});
  return runCli(['propose', '--from', src, '--run-id', `r${i}`, '--knowledge', k, '--json']).json.bundle_digest;
}

describe('concurrent use', () => {
  it(
    '16 processes promote 16 confirmed siblings at once: exactly ' +
      'one wins, the others exit 6, and the tree verifies',
    async () => {
      const k = tree('promote16');
      const candidates = Array.from({length: 16}, (_, i) => propose(k, i));
      const confirmed = await Promise.all(
        candidates.map((c) => run(['confirm', c, ...evaluation, '--knowledge', k, '--json', '--lock-timeout', '120'])),
      );
      expect(confirmed.map((r) => JSON.parse(r.stdout).status)).toEqual(Array(16).fill('confirmed'));
      const results = await Promise.all(
        candidates.map((c) => run(['promote', c, '--knowledge', k, '--json', '--lock-timeout', '120'])),
      );
      const codes = results.map((r) => r.status).sort();
      expect(codes).toEqual([0, ...Array(15).fill(6)]);
      const winner = candidates[results.findIndex((r) => r.status === 0)]!;
      const active = JSON.parse(fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8'));
      expect(active.bundle_digest).toBe(winner);
      expect(fs.readdirSync(path.join(k, 'demo/context_bundles/promotions'))).toHaveLength(1);
      expect(verify({knowledge: k})).toMatchObject({status: 'ok', errors: []});
    },
  );

  it('8 processes ingest the same results for one candidate at once: no pair is lost or duplicated', async () => {
    const k = tree('ingest8');
    const c = propose(k, 0);
    const units = path.join(root, 'ingest-units.jsonl');
    runCli([
      'plan',
      'export',
      c,
      '--engine',
      'e',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--out',
      units,
      '--knowledge',
      k,
      '--json',
    ]);
    const results = readUnits(units).map((u) =>
      JSON.stringify(trialResult(u, {score: 0.5 + (u.seed % 5) / 50}, {score: 0.5 + (u.seed % 3) / 50})),
    );
    const file = path.join(root, 'ingest-results.jsonl');
    fs.writeFileSync(file, `${results.join('\n')}\n`);
    const all = await Promise.all(
      Array.from({length: 8}, () =>
        run(['trials', 'ingest', c, file, '--knowledge', k, '--json', '--lock-timeout', '120']),
      ),
    );
    for (const r of all) expect([0, 3, 4]).toContain(r.status);
    const envelope = JSON.parse(
      fs.readFileSync(path.join(k, `demo/context_bundles/candidates/${c}/matched_trials.json`), 'utf8'),
    );
    const keys = envelope.trials.map((t: {pair_key: string}) => t.pair_key);
    expect(new Set(keys).size).toBe(keys.length);
    // Equal to one process ingesting alone.
    const alone = tree('ingest1');
    expect(propose(alone, 0)).toBe(c);
    runCli([
      'plan',
      'export',
      c,
      '--engine',
      'e',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--out',
      path.join(root, 'u1.jsonl'),
      '--knowledge',
      alone,
      '--json',
    ]);
    runCli(['trials', 'ingest', c, file, '--knowledge', alone, '--json']);
    expect(fs.readFileSync(path.join(k, `demo/context_bundles/candidates/${c}/matched_trials.json`), 'utf8')).toBe(
      fs.readFileSync(path.join(alone, `demo/context_bundles/candidates/${c}/matched_trials.json`), 'utf8'),
    );
    expect(verify({knowledge: k}).errors).toEqual([]);
  });

  it(
    'a reader sampling active.json 10,000 times during 200 promotions ' +
      'and rollbacks always sees a whole pointer naming a bundle',
    async () => {
      const k = tree('reader');
      const c = propose(k, 0);
      expect(runCli(['confirm', c, ...evaluation, '--knowledge', k, '--json'], {env: ENV}).json.status).toBe(
        'confirmed',
      );
      const writer = `
      const {promote} = await import(${JSON.stringify(path.join(PROJECT_ROOT, 'dist/core/promotion/promote.js'))});
      const {rollback} = await import(${JSON.stringify(path.join(PROJECT_ROOT, 'dist/core/rollback/rollback.js'))});
      await promote({knowledge: ${JSON.stringify(k)}, candidate: ${JSON.stringify(c)}});
      for (let i = 0; i < 199; i++) await rollback({knowledge: ${JSON.stringify(k)}, rationale: 'flip ' + i});
      process.stdout.write('done');
    `;
      const child = spawn(process.execPath, ['--input-type=module', '-e', writer], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const finished = new Promise<void>((resolve) => child.on('close', () => resolve()));
      const activeFile = path.join(k, 'demo/context_bundles/active.json');
      const bundles = path.join(k, 'demo/context_bundles/bundles');
      const seen = new Set<string>();
      let reads = 0;
      let bad = 0;
      while (reads < 10_000) {
        const text = fs.readFileSync(activeFile, 'utf8');
        try {
          const pointer = JSON.parse(text);
          if (!fs.existsSync(path.join(bundles, `${pointer.bundle_digest}.json`))) bad++;
          seen.add(pointer.bundle_digest);
        } catch {
          bad++;
        }
        reads++;
        if (reads % 500 === 0) await new Promise((r) => setImmediate(r));
      }
      await finished;
      expect(bad).toBe(0);
      expect(seen.size).toBeGreaterThanOrEqual(1);
      expect(
        runCli(['log', '--knowledge', k, '--json']).json.entries.filter(
          (e: {served?: string}) => e.served !== undefined,
        ),
      ).toHaveLength(200);
      expect(verify({knowledge: k}).errors).toEqual([]);
    },
  );

  it(
    'a holder whose lock was taken over while its event loop was ' +
      'blocked finds out before its next rename and writes nothing',
    async () => {
      const k = tree('takeover');
      const holder =
        `
      const {KnowledgeStore} = await ` +
        `import(${JSON.stringify(path.join(PROJECT_ROOT, 'dist/store/index.js'))});
      const {activeDigest, readActive, swapActive} = await ` +
        `import(${JSON.stringify(path.join(PROJECT_ROOT, 'dist/store/kinds/promotion/active-pointer.js'))});
      const store = KnowledgeStore.open(${JSON.stringify(k)}).scenario('demo');
      try {
        await store.withLock(5, () => {
          process.stdout.write('held\\n');
          const until = Date.now() + 4500;
          while (Date.now() < until) {} // the event loop is blocked: no heartbeat
          const a = readActive(store);
          swapActive(store, activeDigest(store), {...a, rationale: 'written by a holder that lost ` +
        `its lock'});
        });
        process.stdout.write('wrote\\n');
      } catch (error) {
        process.stdout.write(error.code + '\\n');
      }
    `;
      const before = fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8');
      const env = {...process.env, AUTOCTX_LOCK_STALE_MS: '2000'};
      const a = spawn(process.execPath, ['--input-type=module', '-e', holder], {env});
      let out = '';
      a.stdout.on('data', (d) => (out += d));
      await new Promise<void>((resolve) => a.stdout.once('data', () => resolve()));
      // Another writer takes the lock over once its heartbeat is stale.
      const taker = await run(['rollback', '--rationale', 'x', '--knowledge', k, '--json', '--lock-timeout', '10'], {
        AUTOCTX_LOCK_STALE_MS: '2000',
      });
      await new Promise<void>((resolve) => a.on('close', () => resolve()));
      // it got the lock; nothing to roll back to (the refusal is recorded)
      expect(JSON.parse(taker.stdout).status).toBe('refused');
      expect(out.trim().split('\n')).toEqual(['held', 'LOCK_LOST']);
      expect(fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8')).toBe(before);
    },
  );
});
