import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {runCli} from '../helpers/cli.js';
import {copyRichKnowledge, copySampleKnowledge, treeHash} from '../helpers/tree.js';
import {RICH_KNOWLEDGE, RICH_LEGACY_POLICY} from '../helpers/paths.js';
import {FAKE, FIXTURES_12} from '../helpers/pipeline.js';

// test/fixtures/upstream-rich: trees the Python implementation's own store and coordinator wrote
// (its README says how): a campaign with an audit hold, its own rollbacks, schema-1 evidence.
const ROLLED = {
  base: 'b258b0aa65e748cd68adecaedf92828bc7195e8b894b77f31ab6c2b89603bd1c',
  first: 'e8e8b45fd958f44bf0201cb12d793be950c095a14b187939f1382f521b7e5f78',
};

const active = (k: string, scenario: string) =>
  JSON.parse(fs.readFileSync(path.join(k, scenario, 'context_bundles/active.json'), 'utf8'));
const files = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

describe("a tree whose newest pointer move is the Python implementation's own rollback", () => {
  it('autoctx rollback rolls back from it, keeps the move it moved on from, and the tree verifies', () => {
    const k = copyRichKnowledge();
    const r = runCli([
      'rollback',
      '--knowledge',
      k,
      '--scenario',
      'rolled',
      '--rationale',
      'the short answers were better',
      '--json',
    ]);
    expect([r.status, r.json.status, r.json.bundle_digest]).toEqual([0, 'rolled_back', ROLLED.first]);
    expect(active(k, 'rolled')).toMatchObject({
      bundle_digest: ROLLED.first,
      rollback_target_digest: ROLLED.base,
      rationale: 'rollback: the short answers were better',
    });
    // The Python rollback's pointer is kept, byte for byte in content, as the move autoctx rolled back from.
    const kept = files(path.join(k, 'rolled/context_bundles/foreign_moves'));
    expect(kept).toHaveLength(1);
    expect(
      JSON.parse(fs.readFileSync(path.join(k, 'rolled/context_bundles/foreign_moves', kept[0]!), 'utf8')).pointer,
    ).toEqual(active(RICH_KNOWLEDGE, 'rolled'));
    const v = runCli(['verify', '--knowledge', k, '--scenario', 'rolled', '--json']);
    expect([v.status, v.json.errors, v.json.warnings]).toEqual([0, [], []]);
    expect(v.json.notes.map((n: {code: string}) => n.code)).toContain('FOREIGN_POINTER_MOVE');
    // And back again, through the kept move.
    const again = runCli([
      'rollback',
      '--knowledge',
      k,
      '--scenario',
      'rolled',
      '--rationale',
      'no, the long ones',
      '--json',
    ]);
    expect([again.status, again.json.bundle_digest]).toEqual([0, ROLLED.base]);
    expect(runCli(['verify', '--knowledge', k, '--scenario', 'rolled', '--json']).json.errors).toEqual([]);
    expect(files(path.join(k, 'rolled/context_bundles/rollbacks')).filter((f) => f.startsWith('RBX-'))).toHaveLength(2);
  });

  it("an epoch rollover over the Python implementation's rollback keeps it too", () => {
    const k = copyRichKnowledge();
    const r = runCli([
      'epoch',
      'rollover',
      '--evaluator-epoch',
      'epoch-2',
      '--knowledge',
      k,
      '--scenario',
      'rolled',
      '--json',
    ]);
    expect([r.status, r.json.status]).toEqual([0, 'rolled_over']);
    expect(runCli(['verify', '--knowledge', k, '--scenario', 'rolled', '--json']).json).toMatchObject({
      status: 'ok',
      errors: [],
      warnings: [],
    });
  });
});

const LEGACY = {
  confirmed: '847de74de9eadede7ef4669b522ef786d211cc10030b9545beaae5831c607576',
  rejected: 'b9052894efd4a2a37def6de98f0e36b0536e649c7e389688c455c26bba4382e6',
};
const evaluation = ['--evaluator', `node ${FAKE}`, '--fixtures', FIXTURES_12, '--quiet'];

describe('legacy (schema-1) evidence the Python implementation wrote, with no plan and no diff', () => {
  it('every evaluation command refuses it before writing anything, naming trials migrate', () => {
    const k = copyRichKnowledge();
    const before = treeHash(k);
    for (const args of [
      ['confirm', LEGACY.confirmed.slice(0, 12), ...evaluation],
      ['confirm', LEGACY.confirmed.slice(0, 12), ...evaluation, '--policy', RICH_LEGACY_POLICY],
      ['screen', LEGACY.rejected.slice(0, 12), ...evaluation, '--policy', RICH_LEGACY_POLICY],
      ['confirm', LEGACY.confirmed.slice(0, 12), ...evaluation, '--policy', RICH_LEGACY_POLICY, '--campaign', 'c1'],
    ]) {
      const r = runCli([...args, '--knowledge', k, '--scenario', 'legacy', '--json']);
      expect([r.status, r.json.error.code]).toEqual([2, 'INVALID_TRANSITION']);
      expect(r.json.error.message).toContain(
        'autoctx trials migrate ' +
          (LEGACY.confirmed.slice(0, 12) === args[1] ? LEGACY.confirmed.slice(0, 12) : LEGACY.rejected.slice(0, 12)) +
          ' --policy FILE',
      );
      expect(treeHash(k)).toBe(before);
    }
    // The legacy evidence can still be migrated afterwards.
    expect(
      runCli([
        'trials',
        'migrate',
        LEGACY.confirmed.slice(0, 12),
        '--policy',
        RICH_LEGACY_POLICY,
        '--knowledge',
        k,
        '--scenario',
        'legacy',
        '--json',
      ]).json.status,
    ).toBe('migrated');
  });

  it('verify warns before migration; after trials migrate verify is clean and the confirmed candidate promotes', () => {
    const k = copyRichKnowledge();
    const v = runCli(['verify', '--knowledge', k, '--scenario', 'legacy', '--json']);
    expect([v.status, v.json.errors]).toEqual([0, []]);
    expect(v.json.warnings.map((w: {code: string}) => w.code)).toEqual(['LEGACY_EVIDENCE', 'LEGACY_EVIDENCE']);
    const before = treeHash(k);
    const refused = runCli([
      'promote',
      LEGACY.confirmed.slice(0, 12),
      '--knowledge',
      k,
      '--scenario',
      'legacy',
      '--json',
    ]);
    expect(refused.status).toBe(8);
    expect(treeHash(k)).toBe(before);
    for (const d of [LEGACY.confirmed, LEGACY.rejected]) {
      const m = runCli([
        'trials',
        'migrate',
        d.slice(0, 12),
        '--policy',
        RICH_LEGACY_POLICY,
        '--knowledge',
        k,
        '--scenario',
        'legacy',
        '--json',
      ]);
      expect(m.json).toMatchObject({status: 'migrated', bit_exact: true});
    }
    expect(runCli(['verify', '--knowledge', k, '--scenario', 'legacy', '--json']).json).toMatchObject({
      status: 'ok',
      errors: [],
      warnings: [],
    });
    const p = runCli(['promote', LEGACY.confirmed.slice(0, 12), '--knowledge', k, '--scenario', 'legacy', '--json']);
    expect([p.status, p.json.status]).toEqual([0, 'promoted']);
    expect(active(k, 'legacy').bundle_digest).toBe(LEGACY.confirmed);
    // The diff the first store never wrote is written at promotion, as upstream's promote does.
    expect(
      fs.existsSync(path.join(k, 'legacy/context_bundles/candidates', LEGACY.confirmed, 'manifest_diff.json')),
    ).toBe(true);
    expect(runCli(['verify', '--knowledge', k, '--scenario', 'legacy', '--json']).json).toMatchObject({
      status: 'ok',
      errors: [],
      warnings: [],
    });
  });

  it(
    'an autoctx candidate that lost its plan and seal is still ' +
      'an error (only candidates that predate autoctx lack them)',
    () => {
      const k = copyRichKnowledge();
      runCli([
        'trials',
        'migrate',
        LEGACY.confirmed.slice(0, 12),
        '--policy',
        RICH_LEGACY_POLICY,
        '--knowledge',
        k,
        '--scenario',
        'legacy',
      ]);
      // The scenario now keeps histories; a candidate not listed as predating must have its diff.
      const adoption = path.join(k, 'legacy/context_bundles/record_histories.json');
      const doc = JSON.parse(fs.readFileSync(adoption, 'utf8'));
      fs.writeFileSync(
        adoption,
        JSON.stringify({...doc, predating: doc.predating.filter((d: string) => d !== LEGACY.confirmed)}, null, 2),
      );
      const codes = runCli(['verify', '--knowledge', k, '--scenario', 'legacy', '--json']).json.errors.map(
        (e: {code: string}) => e.code,
      );
      expect(codes).toEqual(expect.arrayContaining(['MISSING_DIFF', 'MISSING_PLAN']));
    },
  );
});

const CAMPAIGN = {
  promoted: '3c51c548b174c505110248e35333ef12325c702066aa4cbcfd10fd402b780231',
  held: 'bec7a58e2f3eb19a36ebe880affc912f100d9ce68bcdbe85e5eb4007df88e792',
};

describe('a campaign the Python implementation ran', () => {
  it(
    'its confirmation trials run past the ordinary decision (for ' +
      "the campaign's blocks) are recognized from its ledger",
    () => {
      const k = copyRichKnowledge();
      const v = runCli(['verify', '--knowledge', k, '--scenario', 'campaign', '--json']);
      expect([v.status, v.json.errors, v.json.warnings]).toEqual([0, [], []]);
      // Without the ledger's reservation of the plan nothing proves the campaign: the same trials are not what a run
      // records.
      const ledger = path.join(k, 'campaign/context_bundles/promotion-risk/run-7/false-promotion.json');
      fs.renameSync(ledger, `${ledger}.moved`);
      const codes = runCli(['verify', '--knowledge', k, '--scenario', 'campaign', '--json']).json.errors.map(
        (e: {code: string}) => e.code,
      );
      expect(codes).toContain('TRIAL_NOT_PLANNED');
    },
  );

  it("the candidate its audit held promotes through the campaign's gate, which authorizes it in the ledger", () => {
    const k = copyRichKnowledge();
    const p = runCli(['promote', CAMPAIGN.held.slice(0, 12), '--knowledge', k, '--scenario', 'campaign', '--json']);
    expect([p.status, p.json.status]).toEqual([0, 'promoted']);
    const ledger = JSON.parse(
      fs.readFileSync(path.join(k, 'campaign/context_bundles/promotion-risk/run-7/false-promotion.json'), 'utf8'),
    );
    expect(ledger.reservations.map((r: {status: string}) => r.status)).toEqual(['authorized', 'authorized']);
    expect(
      fs.existsSync(
        path.join(k, 'campaign/context_bundles/promotion-risk/run-7/reservation-artifacts', `${CAMPAIGN.held}.json`),
      ),
    ).toBe(true);
    expect(runCli(['verify', '--knowledge', k, '--scenario', 'campaign', '--json']).json).toMatchObject({
      status: 'ok',
      errors: [],
      warnings: [],
    });
  });
});

const ROLLED_ON = {
  base: 'b942e1bcd29b62fba3652c68c3e77abaec895b906ff659369d86b9cecd418aef',
  first: 'bec4e8057a9463980cd11ebb594e88165be00c1e658b4b654177ca6c42ad6722',
  second: '8fb5783dbaf9d9edcbc0c5dac7778487cfa49598b7bfd1465d583cd3e9ce116d',
};

describe('a candidate the Python implementation promoted, rolled back, then moved on from', () => {
  it('verifies, with a note naming the rollback its records prove; autoctx rolls back over it', () => {
    const k = copyRichKnowledge();
    const v = runCli(['verify', '--knowledge', k, '--scenario', 'rolled-on', '--json']);
    expect([v.status, v.json.errors, v.json.warnings]).toEqual([0, [], []]);
    expect(v.json.notes).toContainEqual(
      expect.objectContaining({
        code: 'FOREIGN_POINTER_MOVE',
        file: `rolled-on/context_bundles/candidates/${ROLLED_ON.first}/record.json`,
      }),
    );
    const r = runCli([
      'rollback',
      '--knowledge',
      k,
      '--scenario',
      'rolled-on',
      '--rationale',
      'back to the baseline',
      '--json',
    ]);
    expect([r.status, r.json.bundle_digest]).toEqual([0, ROLLED_ON.base]);
    expect(runCli(['verify', '--knowledge', k, '--scenario', 'rolled-on', '--json']).json).toMatchObject({
      status: 'ok',
      errors: [],
      warnings: [],
    });
  });

  it(
    'without the record that proves the rollback, the promotion ' +
      'it undid never served and the record is a mismatch',
    () => {
      const k = copyRichKnowledge();
      const file = path.join(k, 'rolled-on/context_bundles/candidates', ROLLED_ON.first, 'record.json');
      const record = JSON.parse(fs.readFileSync(file, 'utf8'));
      fs.writeFileSync(file, JSON.stringify({...record, rationale: 'retired by hand'}, null, 2));
      const v = runCli(['verify', '--knowledge', k, '--scenario', 'rolled-on', '--json']);
      expect(v.json.errors.map((e: {code: string}) => e.code)).toContain('LIFECYCLE_MISMATCH');
    },
  );
});

const ROLLED_OVER = {
  old: '9a8e7d0280f86e69604cc116181a259d7230f2ad7914e1c5572e6703e89e7f3e',
  base: 'a3bb23088ef5de29d1c863c96795f07eb50058ff3e6a8d3a129b8b179caca5a2',
  third: '94302db10c4be32d91f1fdae7cfddede993f6986d297c7173358fa3df285bf7c',
};

describe('a tree in which the Python implementation rolled over its epoch and then promoted', () => {
  it(
    'verifies with a note naming the rollover its records prove, ' +
      'and autoctx rolls back to the new baseline and forth',
    () => {
      const k = copyRichKnowledge();
      const v = runCli(['verify', '--knowledge', k, '--scenario', 'rolled-over', '--json']);
      expect([v.status, v.json.errors, v.json.warnings]).toEqual([0, [], []]);
      expect(v.json.notes).toContainEqual(
        expect.objectContaining({
          code: 'FOREIGN_POINTER_MOVE',
          file: `rolled-over/context_bundles/candidates/${ROLLED_OVER.old}/record.json`,
        }),
      );
      expect(
        runCli(['rollback', '--knowledge', k, '--scenario', 'rolled-over', '--rationale', 'undo', '--json']).json
          .bundle_digest,
      ).toBe(ROLLED_OVER.base);
      expect(
        runCli(['rollback', '--knowledge', k, '--scenario', 'rolled-over', '--rationale', 'redo', '--json']).json
          .bundle_digest,
      ).toBe(ROLLED_OVER.third);
      expect(runCli(['verify', '--knowledge', k, '--scenario', 'rolled-over', '--json']).json).toMatchObject({
        status: 'ok',
        errors: [],
        warnings: [],
      });
    },
  );
});

describe('every Python-written tree of the compatibility suite', () => {
  it(
    'verifies with no errors (legacy evidence is a warning until ' +
      'migrated), and status, log and a refused command write nothing',
    () => {
      const k = copyRichKnowledge();
      const before = treeHash(k);
      const v = runCli(['verify', '--knowledge', k, '--json']);
      expect([v.status, v.json.errors]).toEqual([0, []]);
      expect(new Set(v.json.warnings.map((w: {code: string}) => w.code))).toEqual(new Set(['LEGACY_EVIDENCE']));
      for (const scenario of ['campaign', 'rolled', 'rolled-on', 'rolled-over', 'legacy']) {
        expect(runCli(['status', '--knowledge', k, '--scenario', scenario, '--json']).status).toBe(0);
        expect(runCli(['log', '--knowledge', k, '--scenario', scenario, '--json']).status).toBe(0);
      }
      // Refused: a rollback the caller expected from another bundle, a promote of a superseded bundle.
      expect(
        runCli([
          'rollback',
          '--knowledge',
          k,
          '--scenario',
          'rolled',
          '--rationale',
          'x',
          '--expect-active',
          ROLLED.first.slice(0, 12),
          '--json',
        ]).status,
      ).toBe(6);
      const promoted = runCli([
        'promote',
        ROLLED_ON.first.slice(0, 12),
        '--knowledge',
        k,
        '--scenario',
        'rolled-on',
        '--json',
      ]);
      expect([promoted.status, promoted.json.error?.code, promoted.json.error?.message]).toEqual([
        2,
        'NOT_CONFIRMED',
        expect.stringContaining('is superseded, not confirmed; nothing was promoted'),
      ]);
      expect(treeHash(k)).toBe(before);
    },
  );

  it('the fixture tree itself is never written by reading commands', () => {
    const before = treeHash(RICH_KNOWLEDGE);
    runCli(['verify', '--knowledge', RICH_KNOWLEDGE]);
    runCli(['status', '--knowledge', RICH_KNOWLEDGE, '--scenario', 'rolled']);
    expect(treeHash(RICH_KNOWLEDGE)).toBe(before);
  });
});

describe('a Python rollback after autoctx moves, which autoctx then moved on from', () => {
  it("is kept in foreign_moves/, and the kept pointer's loss is an error", () => {
    const k = copySampleKnowledge();
    expect(runCli(['rollback', '--knowledge', k, '--rationale', 'one']).status).toBe(0);
    expect(runCli(['rollback', '--knowledge', k, '--rationale', 'two']).status).toBe(0);
    // The Python implementation's rollback, as its store writes it: the pointer, then the two records.
    const dir = path.join(k, 'demo/context_bundles');
    const current = active(k, 'demo');
    const at = new Date().toISOString().replace('Z', '000+00:00');
    const pointer = {
      schema_version: 1,
      bundle_digest: current.rollback_target_digest,
      evaluator_epoch: current.evaluator_epoch,
      promotion_id: null,
      rollback_target_digest: current.bundle_digest,
      activated_at: at,
      rationale: 'rollback: python did it',
    };
    fs.writeFileSync(path.join(dir, 'active.json'), JSON.stringify(pointer, null, 2));
    for (const [d, lifecycle, rationale] of [
      [current.bundle_digest, 'superseded', 'rolled back: python did it'],
      [current.rollback_target_digest, 'active', 'restored by rollback: python did it'],
    ]) {
      const file = path.join(dir, 'candidates', d, 'record.json');
      fs.writeFileSync(
        file,
        JSON.stringify({...JSON.parse(fs.readFileSync(file, 'utf8')), lifecycle, rationale, updated_at: at}, null, 2),
      );
    }
    // takes the records another implementation changed into their histories
    expect(runCli(['repair', '--knowledge', k]).status).toBe(0);
    expect(runCli(['verify', '--knowledge', k, '--json']).json.errors).toEqual([]);
    const r = runCli(['rollback', '--knowledge', k, '--rationale', 'three', '--json']);
    expect([r.status, r.json.bundle_digest]).toEqual([0, current.bundle_digest]);
    expect(runCli(['verify', '--knowledge', k, '--json']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
    const kept = files(path.join(dir, 'foreign_moves'));
    expect(kept).toHaveLength(1);
    // Edited, it no longer is the pointer its id names.
    const keptFile = path.join(dir, 'foreign_moves', kept[0]!);
    const text = fs.readFileSync(keptFile, 'utf8');
    fs.writeFileSync(keptFile, text.replace('rollback: python did it', 'rollback: someone else did it'));
    expect(
      runCli(['verify', '--knowledge', k, '--json']).json.errors.map((e: {code: string; file: string}) => e.file),
    ).toContain(`demo/context_bundles/foreign_moves/${kept[0]}`);
    fs.writeFileSync(keptFile, text);
    fs.rmSync(keptFile);
    const codes = runCli(['verify', '--knowledge', k, '--json']).json.errors.map((e: {code: string}) => e.code);
    expect(codes).toContain('ROLLBACK_NOT_SERVED');
  });
});
