import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {runCli} from '../helpers/cli.js';
import {copyRichKnowledge, treeHash} from '../helpers/tree.js';
import {RICH_KNOWLEDGE} from '../helpers/paths.js';

// test/fixtures/upstream-rich: trees the Python implementation's own store and coordinator wrote
// (its README says how): a campaign with an audit hold, its own rollbacks, schema-1 evidence.
const ROLLED = {base: 'b258b0aa65e748cd68adecaedf92828bc7195e8b894b77f31ab6c2b89603bd1c', first: 'e8e8b45fd958f44bf0201cb12d793be950c095a14b187939f1382f521b7e5f78'};

const active = (k: string, scenario: string) => JSON.parse(fs.readFileSync(path.join(k, scenario, 'context_bundles/active.json'), 'utf8'));
const files = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

describe('a tree whose newest pointer move is the Python implementation\'s own rollback', () => {
  it('autoctx rollback rolls back from it, keeps the move it moved on from, and the tree verifies', () => {
    const k = copyRichKnowledge();
    const r = runCli(['rollback', '--knowledge', k, '--scenario', 'rolled', '--rationale', 'the short answers were better', '--json']);
    expect([r.status, r.json.status, r.json.bundle_digest]).toEqual([0, 'rolled_back', ROLLED.first]);
    expect(active(k, 'rolled')).toMatchObject({bundle_digest: ROLLED.first, rollback_target_digest: ROLLED.base, rationale: 'rollback: the short answers were better'});
    // The Python rollback's pointer is kept, byte for byte in content, as the move autoctx rolled back from.
    const kept = files(path.join(k, 'rolled/context_bundles/foreign_moves'));
    expect(kept).toHaveLength(1);
    expect(JSON.parse(fs.readFileSync(path.join(k, 'rolled/context_bundles/foreign_moves', kept[0]!), 'utf8')).pointer).toEqual(active(RICH_KNOWLEDGE, 'rolled'));
    const v = runCli(['verify', '--knowledge', k, '--scenario', 'rolled', '--json']);
    expect([v.status, v.json.errors, v.json.warnings]).toEqual([0, [], []]);
    expect(v.json.notes.map((n: {code: string}) => n.code)).toContain('FOREIGN_POINTER_MOVE');
    // And back again, through the kept move.
    const again = runCli(['rollback', '--knowledge', k, '--scenario', 'rolled', '--rationale', 'no, the long ones', '--json']);
    expect([again.status, again.json.bundle_digest]).toEqual([0, ROLLED.base]);
    expect(runCli(['verify', '--knowledge', k, '--scenario', 'rolled', '--json']).json.errors).toEqual([]);
    expect(files(path.join(k, 'rolled/context_bundles/rollbacks')).filter((f) => f.startsWith('RBX-'))).toHaveLength(2);
  });

  it('an epoch rollover over the Python implementation\'s rollback keeps it too', () => {
    const k = copyRichKnowledge();
    const r = runCli(['epoch', 'rollover', '--evaluator-epoch', 'epoch-2', '--knowledge', k, '--scenario', 'rolled', '--json']);
    expect([r.status, r.json.status]).toEqual([0, 'rolled_over']);
    expect(runCli(['verify', '--knowledge', k, '--scenario', 'rolled', '--json']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
  });
});
