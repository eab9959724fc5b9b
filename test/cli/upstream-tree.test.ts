import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {verify} from '../../src/core/common/verify.js';
import {runCli} from '../helpers/cli.js';
import {FAKE, FIXTURES_12} from '../helpers/pipeline.js';
import {copySampleKnowledge, treeHash} from '../helpers/tree.js';
import {SAMPLE_KNOWLEDGE} from '../helpers/paths.js';

// The tree the Python implementation wrote (no final newlines, 0.0 spellings,
// a campaign ledger, a negative result). Tests work on copies; shared/ stays untouched.
let knowledge: string;
beforeAll(() => {
  knowledge = copySampleKnowledge();
});
afterAll(() => fs.rmSync(path.dirname(knowledge), {recursive: true, force: true}));

describe('trees written by the Python implementation', () => {
  it('verify accepts the tree with no errors and no warnings', () => {
    const r = runCli(['verify', '--knowledge', knowledge, '--json']);
    expect(r.status).toBe(0);
    expect(r.json).toMatchObject({status: 'ok', scenarios: ['demo'], bundles_checked: 3, errors: [], warnings: []});
  });

  it('status reports the active pointer and lifecycles', () => {
    const r = runCli(['status', '--knowledge', knowledge, '--json']);
    expect(r.status).toBe(0);
    expect(r.json.scenarios).toMatchObject([
      {
        scenario: 'demo',
        active: {
          bundle_digest: '6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252',
          evaluator_epoch: 'epoch-1',
          rollback_target_digest: '9fe14ef551d9ecddd152d0826d2e636e63613b62684ce950f45f8e7a936b71bb',
          promotion_id: 'eb61659e23634846820a743a1ed80e8f',
        },
        candidates: {
          active: ['6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252'],
          rejected: ['28c6b3dd75f91e22e276a5095ab79804f165e6e38ac632c9d228a43ff4cd2ada'],
          superseded: ['9fe14ef551d9ecddd152d0826d2e636e63613b62684ce950f45f8e7a936b71bb'],
        },
      },
    ]);
  });

  it('rollback on a copy gives a tree that verify accepts, and rolling back again restores the promotion', () => {
    const r = runCli([
      'rollback',
      '--knowledge',
      knowledge,
      '--rationale',
      'compatibility check',
      '--expect-active',
      '6d9bc734',
      '--json',
    ]);
    expect(r.status).toBe(0);
    expect(r.json).toMatchObject({
      status: 'rolled_back',
      bundle_digest: '9fe14ef551d9ecddd152d0826d2e636e63613b62684ce950f45f8e7a936b71bb',
      already_done: false,
    });
    expect(verify({knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
    const active = JSON.parse(fs.readFileSync(path.join(knowledge, 'demo/context_bundles/active.json'), 'utf8'));
    expect(active).toMatchObject({
      bundle_digest: '9fe14ef551d9ecddd152d0826d2e636e63613b62684ce950f45f8e7a936b71bb',
      promotion_id: null,
      rollback_target_digest: '6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252',
    });
    // The records read as upstream's own rollback writes them.
    const rationale = (d: string) =>
      JSON.parse(fs.readFileSync(path.join(knowledge, `demo/context_bundles/candidates/${d}/record.json`), 'utf8'))
        .rationale;
    expect([
      rationale('9fe14ef551d9ecddd152d0826d2e636e63613b62684ce950f45f8e7a936b71bb'),
      rationale('6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252'),
    ]).toEqual(['restored by rollback: compatibility check', 'rolled back: compatibility check']);
    // The baseline has no playbook: its mirror goes away rather than serve stale text.
    expect(fs.existsSync(path.join(knowledge, 'demo/playbook.md'))).toBe(false);
    const again = runCli(['rollback', '--knowledge', knowledge, '--rationale', 'undo', '--json']);
    expect(again.json.bundle_digest).toBe('6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252');
    expect(fs.readFileSync(path.join(knowledge, 'demo/playbook.md'), 'utf8')).toBe('new exact component\n');
    expect(verify({knowledge})).toMatchObject({status: 'ok', errors: []});
    const log = runCli(['log', '--knowledge', knowledge, '--json']);
    // (upstream proposed its rejected candidate after the promotion)
    expect(log.json.entries.map((e: {type: string}) => e.type)).toEqual([
      'rollback',
      'rollback',
      'rejection',
      'proposal',
      'promotion',
      'proposal',
      'init',
    ]);
  });

  it('reads the reference spelling: \\u escapes, 0.0 and no final newline', () => {
    const copy = copySampleKnowledge();
    const file = path.join(
      copy,
      'demo/context_bundles/bundles/6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252.json',
    );
    const text = fs.readFileSync(file, 'utf8');
    // Escape every letter of the component content as \uXXXX, as ensure_ascii would for non-ASCII.
    const escaped = text.replace(
      '"new exact component"',
      `"${[...'new exact component'].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`,
    );
    expect(escaped).not.toBe(text);
    expect(escaped.endsWith('}')).toBe(true);
    fs.writeFileSync(file, escaped);
    expect(
      fs.readFileSync(
        path.join(
          copy,
          'demo/context_bundles/candidates/6d9bc734d9797ede20d2ae1c5c' +
            'ff2b66a4105472dccf2929205f1551ad942252/record.json',
        ),
        'utf8',
      ),
    ).toContain('"min_effect": 0.0');
    expect(verify({knowledge: copy})).toMatchObject({status: 'ok', errors: []});
    fs.rmSync(path.dirname(copy), {recursive: true, force: true});
  });

  it(
    'a run the Python implementation started is not resumed by autoctx: ' +
      'it fails closed naming the bound plan, and changes nothing',
    () => {
      // The rejected candidate as it stood when upstream's run was interrupted: its plan and evidence written, its
      // record
      // still proposed.
      const k = copySampleKnowledge();
      try {
        const dir = path.join(
          k,
          'demo/context_bundles/candidates/28c6b3dd75f91e22e276a5095ab79804f165e6e38ac632c9d228a43ff4cd2ada',
        );
        const record = JSON.parse(fs.readFileSync(path.join(dir, 'record.json'), 'utf8'));
        fs.writeFileSync(
          path.join(dir, 'record.json'),
          JSON.stringify({...record, lifecycle: 'proposed', comparison: null, rationale: ''}, null, 2),
        );
        fs.rmSync(path.join(dir, 'negative_result.json'));
        fs.rmSync(path.join(k, 'demo/negative_result_ledgers'), {recursive: true});
        const before = treeHash(k);
        const r = runCli([
          'confirm',
          '28c6b3dd',
          '--evaluator',
          `node ${FAKE}`,
          '--fixtures',
          FIXTURES_12,
          '--quiet',
          '--knowledge',
          k,
          '--json',
        ]);
        expect([r.status, r.json.error.code]).toEqual([8, 'PLAN_CHANGED']);
        expect(r.json.error.message).toContain('evaluator_plan.json');
        expect(treeHash(k)).toBe(before);
      } finally {
        fs.rmSync(path.dirname(k), {recursive: true, force: true});
      }
    },
  );

  it('the shared fixture tree itself is never written', () => {
    const before = treeHash(SAMPLE_KNOWLEDGE);
    runCli(['status', '--knowledge', SAMPLE_KNOWLEDGE]);
    runCli(['verify', '--knowledge', SAMPLE_KNOWLEDGE]);
    expect(treeHash(SAMPLE_KNOWLEDGE)).toBe(before);
  });
});
