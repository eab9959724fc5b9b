import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCliProcess as runCli} from '../helpers/cli.js';

// The contract of the program itself (bin/run.js, help, colour, exit codes): each command runs as its own process here.
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir, treeHash} from '../helpers/tree.js';

const example = (name: string) => path.join(PROJECT_ROOT, 'knowledge-example/demo', name);
let dir: string;
let knowledge: string;
beforeAll(() => {
  dir = tempDir();
  knowledge = path.join(dir, 'knowledge');
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

function json(args: string[], schema: string, exit = 0) {
  const r = runCli([...args, '--knowledge', knowledge, '--json']);
  expect({exit: r.status, stderr: r.stderr}).toEqual({exit, stderr: ''});
  expect(r.stdout.endsWith('\n')).toBe(true);
  expect(r.stdout.trim().split('\n')).toHaveLength(1);
  expect(resultSchemaProblem(`result-${schema}`, r.json)).toBeNull();
  return r.json;
}

describe('every command with --json prints one object that matches its result schema', () => {
  it('init → propose → show → materialize → diff → status → log → epoch rollover → rollback → verify', () => {
    const i = json(['init', '--scenario', 'demo', '--from', example('baseline')], 'init');
    expect(i).toMatchObject({status: 'initialized', created: true});
    const p = json(['propose', '--from', example('candidate-better'), '--rationale', 'better'], 'propose');
    expect(p).toMatchObject({status: 'proposed', scenario: 'demo', parent_digest: i.bundle_digest});
    expect(json(['bundle', 'show', p.bundle_digest.slice(0, 8)], 'bundle-show')).toMatchObject({
      lifecycle: 'proposed',
      active: false,
    });
    const out = path.join(dir, 'materialized');
    expect(json(['bundle', 'materialize', p.bundle_digest, out], 'bundle-materialize').files).toContain(
      'playbook/playbook.md',
    );
    const built = runCli([
      'bundle',
      'build',
      '--from',
      out,
      '--scenario',
      'demo',
      '--parent',
      i.bundle_digest,
      '--json',
    ]);
    expect(resultSchemaProblem('result-bundle-build', built.json)).toBeNull();
    expect(built.json.bundle_digest).toBe(p.bundle_digest);
    expect(json(['diff', p.bundle_digest, i.bundle_digest], 'diff').manifest_diff.changes).toHaveLength(1);
    expect(json(['status'], 'status').scenarios[0].candidates).toEqual({
      proposed: [p.bundle_digest],
      active: [i.bundle_digest],
    });
    expect(json(['log'], 'log').entries.map((x: {type: string; to_digest: string}) => [x.type, x.to_digest])).toEqual([
      ['proposal', p.bundle_digest],
      ['init', i.bundle_digest],
    ]);
    const e = json(['epoch', 'rollover', '--evaluator-epoch', 'epoch-2'], 'epoch-rollover');
    expect(e).toMatchObject({status: 'rolled_over', previous_digest: i.bundle_digest});
    const r = json(['rollback', '--rationale', 'undo the rollover', '--expect-active', e.bundle_digest], 'rollback');
    expect(r).toMatchObject({bundle_digest: i.bundle_digest});
    expect(
      json(['log'], 'log')
        .entries.filter((x: {served?: string}) => x.served !== undefined)
        .map((x: {type: string; served: string}) => [x.type, x.served]),
    ).toEqual([
      ['rollback', 'serving'],
      ['rollover', 'served'],
    ]);
    expect(json(['verify'], 'verify')).toMatchObject({status: 'ok', errors: []});
  });

  it('tag, reference, grant, handoff, bootstrap render/prepare/claim and recall', () => {
    const active = json(['status'], 'status').scenarios[0].active.bundle_digest;
    const components = json(['bundle', 'show', active], 'bundle-show').manifest.components as Array<{
      digest: string;
      kind: string;
    }>;
    const digest = components.find((c) => c.kind === 'playbook')!.digest;
    expect(json(['tag', 'add', digest], 'tag-add')).toMatchObject({status: 'tagged', tags: 1});
    expect(json(['tag', 'add', digest], 'tag-add')).toMatchObject({status: 'unchanged', tags: 1});
    expect(json(['tag', 'list'], 'tag-list').tags).toEqual([
      expect.objectContaining({component_digest: digest, serving: true, secret: false}),
    ]);
    expect(json(['reference', 'add', 'billing'], 'reference-add')).toMatchObject({
      status: 'updated',
      references: ['billing'],
    });
    expect(json(['reference', 'list'], 'reference-list').references).toEqual([
      {scenario: 'billing', standing: 'missing'},
    ]);
    expect(json(['grant', 'add', 'billing'], 'grant-add')).toMatchObject({grants: ['billing']});
    expect(json(['grant', 'rm', 'billing'], 'grant-rm')).toMatchObject({grants: []});
    expect(json(['reference', 'rm', 'billing'], 'reference-rm')).toMatchObject({references: []});
    const notes = path.join(dir, 'notes.json');
    fs.writeFileSync(notes, '{"summary": "sync fixed in 4.2"}');
    expect(json(['handoff', 'write', '--id', 'notes', '--from', notes], 'handoff-write')).toMatchObject({
      status: 'written',
      revision: 1,
    });
    expect(json(['handoff', 'show', 'notes@1'], 'handoff-show').handoff.content).toEqual({
      summary: 'sync fixed in 4.2',
    });
    const rendered = json(['bootstrap', 'render', '--handoff', 'notes@1'], 'bootstrap-render');
    expect(rendered).toMatchObject({
      status: 'ready',
      items: [{kind: 'handoff'}, {kind: 'component', component_digest: digest}],
    });
    const prepared = json(
      [
        'bootstrap',
        'prepare',
        '--integration',
        'codex',
        '--lifecycle',
        'resume',
        '--enabled',
        '--event-id',
        'thread-9',
        '--handoff',
        'notes@1',
      ],
      'bootstrap-prepare',
    );
    expect(prepared).toMatchObject({
      status: 'ready',
      reason: null,
      content: rendered.content,
      receipt: {state: 'pending', stored: true},
    });
    expect(
      json(['bootstrap', 'claim', prepared.receipt.receipt_id, '--outcome', 'injected'], 'bootstrap-claim'),
    ).toMatchObject({status: 'claimed', state: 'injected'});
    expect(
      json(['bootstrap', 'claim', prepared.receipt.receipt_id, '--outcome', 'injected'], 'error', 6).error.code,
    ).toBe('RECEIPT_ALREADY_CLAIMED');
    expect(json(['recall', '--query', 'helpful', '--receipt', prepared.receipt.receipt_id], 'recall')).toMatchObject({
      receipt_used: true,
    });
    expect(json(['tag', 'rm', digest], 'tag-rm')).toMatchObject({status: 'untagged', tags: 0});
    expect(json(['verify'], 'verify')).toMatchObject({status: 'ok', errors: []});
  });

  it('verify prints status "failed" and exits 8 on a damaged tree', () => {
    const active = path.join(knowledge, 'demo/context_bundles/active.json');
    const original = fs.readFileSync(active, 'utf8');
    fs.writeFileSync(active, original.replace(/"bundle_digest": "./, '"bundle_digest": "0'));
    const v = json(['verify'], 'verify', 8);
    fs.writeFileSync(active, original);
    expect(v.status).toBe('failed');
  });
});

describe('people', () => {
  it('--help lists every command with a one-line description', () => {
    const r = runCli(['--help']);
    expect(r.status).toBe(0);
    for (const c of ['init', 'propose', 'status', 'log', 'rollback', 'diff', 'verify'])
      expect(r.stdout).toMatch(new RegExp(`\\n  ${c}\\s+\\S`));
    for (const t of ['bundle', 'epoch']) expect(r.stdout).toMatch(new RegExp(`\\n  ${t}\\s+\\S`));
    expect(r.stdout).toContain('EXAMPLES');
  });

  it('each command has examples in its help', () => {
    for (const c of [
      ['init'],
      ['propose'],
      ['bundle', 'build'],
      ['bundle', 'show'],
      ['bundle', 'materialize'],
      ['diff'],
      ['status'],
      ['log'],
      ['rollback'],
      ['epoch', 'rollover'],
      ['verify'],
    ]) {
      const r = runCli([...c, '--help']);
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('EXAMPLES');
      expect(r.stdout).toContain(`$ autoctx ${c.join(' ')}`);
    }
  });

  it('human output has no colour codes with NO_COLOR and when not on a terminal', () => {
    const r = runCli(['status', '--knowledge', knowledge], {env: {FORCE_COLOR: '1', NO_COLOR: '1'}});
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(/\u001b\[/);
    expect(r.stdout).toMatch(/^demo: active [0-9a-f]{12}/);
  });

  it('a read-only command changes nothing in the tree', () => {
    const before = treeHash(knowledge);
    for (const c of [['status'], ['log'], ['verify'], ['bundle', 'show', 'b'.repeat(8)]])
      runCli([...c, '--knowledge', knowledge]);
    expect(treeHash(knowledge)).toBe(before);
  });
});

describe('calibrate', () => {
  it('--json prints the table as one object matching its schema', () => {
    const r = runCli(['calibrate', '--campaigns', '20', '--reps', '20', '--seed', '3', '--json']);
    expect(r.status).toBe(0);
    expect(resultSchemaProblem('result-calibrate', r.json)).toBeNull();
    expect(r.json.rows.map((x: {case: string}) => x.case)).toEqual(
      expect.arrayContaining([
        'null normal',
        'null clustered fixtures',
        'clear win',
        'near tie',
        'heteroskedastic win',
        'null bounded heavy tail',
        'bounded heavy-tail win',
      ]),
    );
    expect(r.json.rows.some((x: {case: string}) => x.case.includes('naive'))).toBe(true);
  });
});
