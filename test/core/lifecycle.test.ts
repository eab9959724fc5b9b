import fs from 'node:fs';
import path from 'node:path';
import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {init} from '../../src/core/common/init.js';
import {propose} from '../../src/core/promotion/propose.js';
import {rollback} from '../../src/core/rollback/rollback.js';
import {rolloverEpoch} from '../../src/core/rollback/epoch.js';
import {status} from '../../src/core/common/status.js';
import {log} from '../../src/core/common/log.js';
import {verify} from '../../src/core/common/verify.js';
import {showBundle, materialize, buildBundle, diffBundles} from '../../src/core/bundle/bundle.js';
import {KnowledgeStore} from '../../src/store/index.js';
import {isoTimestamp} from '../../src/model/index.js';
import {runCli} from '../helpers/cli.js';
import {evalArgs, fakeEnv} from '../helpers/pipeline.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

let dir: string;
let knowledge: string;
let baseline: string;
let candidate: string;

beforeEach(() => {
  dir = tempDir();
  knowledge = path.join(dir, 'knowledge');
  baseline = writeSource(path.join(dir, 'baseline'), {
    'playbook/playbook.md': 'Be helpful.\n',
    'hints/hints.md': 'Check the logs first.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  candidate = writeSource(path.join(dir, 'candidate'), {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'hints/hints.md': 'Check the logs first.\n',
    'routing_config/roles.json': '{"model_competitor":"small"}',
  });
});
afterEach(() => fs.rmSync(dir, {recursive: true, force: true}));

async function setUp() {
  const i = await init({knowledge, scenario: 'demo', from: baseline});
  const p = await propose({knowledge, from: candidate, rationale: 'more precise'});
  return {i, p};
}

describe('init', () => {
  it('creates the baseline as the active bundle, mirrors and a .gitignore', async () => {
    const r = await init({knowledge, scenario: 'demo', from: baseline});
    expect(r).toMatchObject({status: 'initialized', created: true, scenario: 'demo', evaluator_epoch: 'epoch-1'});
    const active = JSON.parse(fs.readFileSync(path.join(knowledge, 'demo/context_bundles/active.json'), 'utf8'));
    expect(active).toMatchObject({
      bundle_digest: r.bundle_digest,
      promotion_id: null,
      rollback_target_digest: null,
      schema_version: 1,
    });
    expect(fs.readFileSync(path.join(knowledge, 'demo/playbook.md'), 'utf8')).toBe('Be helpful.\n');
    expect(fs.readFileSync(path.join(knowledge, '.gitignore'), 'utf8')).toContain('*.tmp');
    expect(verify({knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
  });

  it('is a no-op when run again with the same material, and refuses other material', async () => {
    const first = await init({knowledge, scenario: 'demo', from: baseline});
    const before = treeHash(knowledge);
    const again = await init({knowledge, scenario: 'demo', from: baseline});
    expect(again).toMatchObject({created: false, bundle_digest: first.bundle_digest});
    expect(treeHash(knowledge)).toBe(before);
    await expect(init({knowledge, scenario: 'demo', from: candidate})).rejects.toMatchObject({
      code: 'ALREADY_INITIALIZED',
      exitCode: 2,
    });
    expect(treeHash(knowledge)).toBe(before);
  });

  it('writes files with sorted keys, two-space indent and a final newline', async () => {
    const r = await init({knowledge, scenario: 'demo', from: baseline});
    const text = fs.readFileSync(
      path.join(knowledge, 'demo/context_bundles/bundles', `${r.bundle_digest}.json`),
      'utf8',
    );
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.split('\n')[1]).toBe('  "components": [');
  });
});

describe('propose', () => {
  it('writes manifest, manifest_diff.json and a proposed record whose parent is the active bundle', async () => {
    const {i, p} = await setUp();
    expect(p).toMatchObject({status: 'proposed', created: true, lifecycle: 'proposed', parent_digest: i.bundle_digest});
    const base = path.join(knowledge, 'demo/context_bundles/candidates', p.bundle_digest);
    const diff = JSON.parse(fs.readFileSync(path.join(base, 'manifest_diff.json'), 'utf8'));
    expect(diff.changes).toEqual([expect.objectContaining({component_kind: 'playbook', component_key: 'playbook'})]);
    expect(diff.digest).toBe(p.manifest_diff_digest);
    const record = JSON.parse(fs.readFileSync(path.join(base, 'record.json'), 'utf8'));
    expect(record).toMatchObject({
      schema_version: 2,
      lifecycle: 'proposed',
      parent_digest: i.bundle_digest,
      rationale: 'more precise',
      source_run_id: 'manual',
      source_generation: 0,
    });
  });

  it('returns the existing record for the same run and generation, refuses another source', async () => {
    const {p} = await setUp();
    const before = treeHash(knowledge);
    const again = await propose({knowledge, from: candidate});
    expect(again).toMatchObject({created: false, bundle_digest: p.bundle_digest});
    expect(treeHash(knowledge)).toBe(before);
    await expect(propose({knowledge, from: candidate, runId: 'other', generation: 2})).rejects.toMatchObject({
      code: 'CANDIDATE_EXISTS',
    });
    expect(treeHash(knowledge)).toBe(before);
  });

  it('takes a manifest-shaped JSON whose lineage must agree with the active bundle', async () => {
    const {i} = await setUp();
    const manifest = {
      scenario: 'demo',
      evaluator_epoch: 'epoch-1',
      parent_digest: i.bundle_digest,
      components: [{kind: 'playbook', key: 'playbook', content: 'json', media_type: 'text/markdown'}],
    };
    const file = path.join(dir, 'm.json');
    fs.writeFileSync(file, JSON.stringify(manifest));
    const r = await propose({knowledge, from: file, runId: 'json'});
    expect(r.parent_digest).toBe(i.bundle_digest);
    fs.writeFileSync(file, JSON.stringify({...manifest, evaluator_epoch: 'epoch-9'}));
    const before = treeHash(knowledge);
    await expect(propose({knowledge, from: file, runId: 'json2'})).rejects.toMatchObject({
      code: 'LINEAGE_MISMATCH',
      exitCode: 2,
    });
    expect(treeHash(knowledge)).toBe(before);
  });
});

describe('rollback', () => {
  async function promotedTree() {
    // A real promotion: confirm with the scriptable evaluator, then promote.
    const {i, p} = await setUp();
    const run = (args: string[]) => runCli([...args, '--knowledge', knowledge, '--json'], {env: fakeEnv(dir)});
    expect(run(['confirm', p.bundle_digest, ...evalArgs()]).json.status).toBe('confirmed');
    expect(run(['promote', p.bundle_digest]).json.status).toBe('promoted');
    return {i, p};
  }

  it('moves the pointer back, records the move, and a second rollback undoes the first', async () => {
    const {i, p} = await promotedTree();
    const r = await rollback({knowledge, rationale: 'regression'});
    expect(r).toMatchObject({
      status: 'rolled_back',
      from_digest: p.bundle_digest,
      bundle_digest: i.bundle_digest,
      already_done: false,
    });
    expect(status({knowledge}).scenarios[0]!.active).toMatchObject({
      bundle_digest: i.bundle_digest,
      rollback_target_digest: p.bundle_digest,
    });
    expect(status({knowledge}).scenarios[0]!.candidates).toMatchObject({
      active: [i.bundle_digest],
      superseded: [p.bundle_digest],
    });
    expect(fs.readFileSync(path.join(knowledge, 'demo/playbook.md'), 'utf8')).toBe('Be helpful.\n');
    const back = await rollback({knowledge, rationale: 'it was fine'});
    expect(back.bundle_digest).toBe(p.bundle_digest);
    expect(log({knowledge}).entries.map((e) => [e.type, e.served])).toEqual([
      ['rollback', 'serving'],
      ['rollback', 'served'],
      ['promotion', 'served'],
      ['confirmation', undefined],
      ['screen', undefined],
      ['proposal', undefined],
      ['init', undefined],
    ]);
    // Every file of the tree is checked, and counted once; the per-machine state area is the one folder verify skips.
    const state = path.join(knowledge, '.state');
    const files = fs
      .readdirSync(knowledge, {recursive: true, withFileTypes: true})
      .filter((e) => e.isFile() && !path.join(e.parentPath, e.name).startsWith(state + path.sep)).length;
    expect(verify({knowledge})).toMatchObject({status: 'ok', errors: [], files_checked: files});
  });

  it('writes the rationales the Python implementation writes into the records a move changes', async () => {
    const {i, p} = await promotedTree();
    const rationale = (d: string) =>
      JSON.parse(fs.readFileSync(path.join(knowledge, `demo/context_bundles/candidates/${d}/record.json`), 'utf8'))
        .rationale;
    const promoted = JSON.parse(fs.readFileSync(path.join(knowledge, 'demo/context_bundles/active.json'), 'utf8'));
    expect([rationale(p.bundle_digest), rationale(i.bundle_digest)]).toEqual([
      promoted.rationale,
      `superseded by ${p.bundle_digest}`,
    ]);
    await rollback({knowledge, rationale: 'regression'});
    // The restored record no longer reads "superseded by …".
    expect([rationale(i.bundle_digest), rationale(p.bundle_digest)]).toEqual([
      'restored by rollback: regression',
      'rolled back: regression',
    ]);
    const r = await rolloverEpoch({knowledge, evaluatorEpoch: 'epoch-2'});
    expect([rationale(r.bundle_digest), rationale(i.bundle_digest)]).toEqual([
      'evaluator epoch rollover from epoch-1',
      'evaluator epoch rolled over to epoch-2',
    ]);
    expect(verify({knowledge})).toMatchObject({status: 'ok', errors: []});
  });

  it('with --expect-active: a re-run after a completed rollback reports it and moves nothing', async () => {
    const {p} = await promotedTree();
    const first = await rollback({knowledge, rationale: 'regression', expectActive: p.bundle_digest});
    const before = treeHash(knowledge);
    const again = await rollback({knowledge, rationale: 'regression', expectActive: p.bundle_digest.slice(0, 10)});
    expect(again).toMatchObject({already_done: true, rollback_id: first.rollback_id});
    expect(treeHash(knowledge)).toBe(before);
  });

  it(
    'with --expect-active naming a bundle that is not active and ' + 'was not rolled back: exit 6, nothing changes',
    async () => {
      const {i} = await promotedTree();
      const before = treeHash(knowledge);
      await expect(rollback({knowledge, rationale: 'x', expectActive: i.bundle_digest})).rejects.toMatchObject({
        code: 'ACTIVE_MOVED',
        exitCode: 6,
      });
      expect(treeHash(knowledge)).toBe(before);
    },
  );

  it(
    'refuses when the active bundle has no rollback ' + 'target: the refusal is recorded, nothing else changes',
    async () => {
      await setUp();
      const records = (rel: string) => /^demo\/context_bundles\/rollbacks(\/RBX-[^/]+\.json)?$/.test(rel);
      const before = treeHash(knowledge, records);
      const r = await rollback({knowledge, rationale: 'x'});
      expect(r).toMatchObject({status: 'refused', execution_status: 'REFUSED', bundle_digest: null});
      expect(r.conditions.find((c) => c.code === 'TARGET_DECLARED')).toMatchObject({passed: false});
      expect(treeHash(knowledge, records)).toBe(before);
      expect(fs.readdirSync(path.join(knowledge, 'demo/context_bundles/rollbacks'))).toEqual([
        `${r.execution_key}.json`,
      ]);
    },
  );
});

describe('epoch rollover', () => {
  it('re-anchors the same components under a new epoch; to the current epoch nothing changes', async () => {
    const {i} = await setUp();
    const before = treeHash(knowledge);
    expect(await rolloverEpoch({knowledge, evaluatorEpoch: 'epoch-1'})).toMatchObject({status: 'unchanged'});
    expect(treeHash(knowledge)).toBe(before);
    const r = await rolloverEpoch({knowledge, evaluatorEpoch: 'epoch-2'});
    expect(r).toMatchObject({status: 'rolled_over', previous_digest: i.bundle_digest, evaluator_epoch: 'epoch-2'});
    const shown = showBundle({knowledge, digest: r.bundle_digest});
    expect(shown.manifest.parent_digest).toBeNull();
    expect(shown.manifest.components).toEqual(showBundle({knowledge, digest: i.bundle_digest}).manifest.components);
    expect(shown.lifecycle).toBe('active');
    expect(showBundle({knowledge, digest: i.bundle_digest}).lifecycle).toBe('superseded');
    expect(verify({knowledge}).status).toBe('ok');
  });
});

describe('bundle build, materialize and diff', () => {
  it(
    'materializing a bundle and proposing the folder gives the ' + 'same digest, also for awkward keys and media types',
    async () => {
      await init({knowledge, scenario: 'demo', from: baseline});
      const active = status({knowledge}).scenarios[0]!.active!.bundle_digest;
      const manifest = {
        scenario: 'demo',
        evaluator_epoch: 'epoch-1',
        parent_digest: active,
        components: [
          {kind: 'prompt_fragment', key: 'a/b c', content: 'slash and space', media_type: 'text/markdown'},
          {kind: 'prompt_fragment', key: '.hidden', content: 'dot', media_type: 'text/plain'},
          {kind: 'prompt_fragment', key: '\u{1F600}\uFB33', content: 'astral', media_type: 'text/x-python'},
          {kind: 'tool_spec', key: 'search', content: '{"b":1,"a":[true,null]}', media_type: 'application/json'},
          {kind: 'tool_spec', key: 'raw', content: '{ "not": "canonical" }', media_type: 'application/json'},
          {kind: 'tool_guidance', key: 'page', content: '<p>hi</p>', media_type: 'text/html'},
        ],
      };
      const file = path.join(dir, 'm.json');
      fs.writeFileSync(file, JSON.stringify(manifest));
      const p = await propose({knowledge, from: file});
      const out = path.join(dir, 'out');
      const m = materialize({knowledge, digest: p.bundle_digest.slice(0, 8), directory: out});
      expect(m.files).toContain('manifest.json');
      expect(fs.existsSync(path.join(out, 'prompt_fragment', 'a%2Fb%20c.md'))).toBe(true);
      expect(buildBundle({from: out, scenario: 'demo', parent: active}).bundle_digest).toBe(p.bundle_digest);
      expect((await propose({knowledge, from: out})).bundle_digest).toBe(p.bundle_digest);
    },
  );

  it('bundle build needs no knowledge tree and writes nothing', () => {
    const before = treeHash(dir);
    const r = buildBundle({from: baseline, scenario: 'demo'});
    expect(r.manifest.components.map((c) => `${c.kind}/${c.key}`)).toEqual([
      'hints/hints',
      'playbook/playbook',
      'routing_config/roles',
    ]);
    expect(r.manifest.components[2]!.content).toBe('{"model_competitor":"small"}');
    expect(treeHash(dir)).toBe(before);
  });

  it('diff shows the changed component', async () => {
    const {i, p} = await setUp();
    const d = diffBundles({knowledge, a: p.bundle_digest, b: i.bundle_digest});
    expect(d.manifest_diff.changes).toHaveLength(1);
    expect(d.manifest_diff.digest).toBe(p.manifest_diff_digest);
  });
});
