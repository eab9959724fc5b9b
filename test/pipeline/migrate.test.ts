import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from '@jest/globals';
import {canonicalJson} from '../../src/canonical/index.js';
import {legacyPairKey} from '../../src/model/index.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCli} from '../helpers/cli.js';
import {POLICY_SMALL, evalArgs, fakeEnv, useTrees} from '../helpers/pipeline.js';
import {copySampleKnowledge, tempDir, treeHash} from '../helpers/tree.js';

// Legacy (schema-1) evidence with no recorded policy, as the Python implementation wrote it
// before it bound policies, gets upstream's way forward: an explicit migration under a given policy,
// verified by replay before anything is rewritten.
const REJECTED = '28c6b3dd75f91e22e276a5095ab79804f165e6e38ac632c9d228a43ff4cd2ada';
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, {recursive: true, force: true})));
const tree = useTrees();

/**
 * Turn a candidate's evidence into the legacy form: a bare array of rows under their old pair keys, the record without
 * a policy.
 */
function makeLegacy(candidateDir: string): {envelope: string; policy: unknown} {
  const file = path.join(candidateDir, 'matched_trials.json');
  const envelope = fs.readFileSync(file, 'utf8');
  const doc = JSON.parse(envelope);
  fs.writeFileSync(
    file,
    JSON.stringify(doc.trials.map((t: Record<string, unknown>) => ({...t, pair_key: legacyPairKey(t as never)}))),
  );
  const recordFile = path.join(candidateDir, 'record.json');
  const record = JSON.parse(fs.readFileSync(recordFile, 'utf8'));
  fs.writeFileSync(
    recordFile,
    JSON.stringify({...record, confirmation_policy: null, confirmation_policy_digest: null}, null, 2),
  );
  fs.rmSync(path.join(candidateDir, 'evidence_seal.json'), {force: true});
  return {envelope, policy: doc.confirmation_policy};
}

describe('autoctx trials migrate', () => {
  it(
    'on the Python tree: verify warns (not fails), replay and repair ' +
      'name the migration, and migrating gives back the same evidence',
    () => {
      const k = copySampleKnowledge();
      dirs.push(path.dirname(k));
      const dir = path.join(k, `demo/context_bundles/candidates/${REJECTED}`);
      const {envelope, policy} = makeLegacy(dir);
      // Written before negative results were bound to evidence (upstream cannot bind one to legacy evidence): none.
      fs.rmSync(path.join(dir, 'negative_result.json'));
      fs.rmSync(path.join(k, 'demo/negative_result_ledgers'), {recursive: true});
      const cli = (args: string[]) => runCli([...args, '--knowledge', k, '--json']);
      const v = cli(['verify']);
      expect([v.status, v.json.errors]).toEqual([0, []]);
      expect(v.json.warnings).toEqual([
        expect.objectContaining({
          code: 'LEGACY_EVIDENCE',
          file: `demo/context_bundles/candidates/${REJECTED}/matched_trials.json`,
          message: expect.stringContaining('autoctx trials migrate 28c6b3dd75f9 --policy FILE'),
        }),
      ]);
      expect(cli(['replay', REJECTED]).json.error.message).toContain(
        'autoctx trials migrate 28c6b3dd75f9 --policy FILE',
      );
      expect(cli(['repair']).json.remaining).toContainEqual(
        expect.stringContaining('autoctx trials migrate 28c6b3dd75f9 --policy FILE'),
      );

      // The wrong policy replays to another comparison: refused, nothing rewritten.
      const wrong = path.join(path.dirname(k), 'wrong.json');
      fs.writeFileSync(
        wrong,
        JSON.stringify({...(policy as object), min_screen_pairs: 50, max_confirmation_pairs: 60}),
      );
      const before = treeHash(k);
      const refused = cli(['trials', 'migrate', REJECTED, '--policy', wrong]);
      expect([refused.status, refused.json.error.code]).toEqual([8, 'REPLAY_MISMATCH']);
      expect(treeHash(k)).toBe(before);

      const right = path.join(path.dirname(k), 'policy.json');
      fs.writeFileSync(right, JSON.stringify(policy));
      const r = cli(['trials', 'migrate', REJECTED, '--policy', right]);
      expect(r.status).toBe(0);
      expect(resultSchemaProblem('result-trials-migrate', r.json)).toBeNull();
      expect(r.json).toMatchObject({
        status: 'migrated',
        lifecycle: 'rejected',
        trials: JSON.parse(envelope).trials.length,
      });
      // A terminal candidate migrates only identical evidence: the envelope upstream wrote, canonically.
      expect(canonicalJson(JSON.parse(fs.readFileSync(path.join(dir, 'matched_trials.json'), 'utf8')))).toBe(
        canonicalJson(JSON.parse(envelope)),
      );
      expect(cli(['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
      expect(cli(['replay', REJECTED]).json.status).toBe('ok');
      // Again: already schema 2, nothing written.
      const after = treeHash(k);
      expect(cli(['trials', 'migrate', REJECTED, '--policy', right]).json.status).toBe('unchanged');
      expect(treeHash(k)).toBe(after);
    },
  );

  it('a confirmed candidate with legacy evidence is migrated, then promoted', () => {
    const t = tree();
    const c = t.propose('c', {
      'playbook/playbook.md': 'Be helpful and precise.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('confirmed');
    makeLegacy(t.file(`candidates/${c}`));
    expect(t.cli(['promote', c]).status).not.toBe(0); // legacy evidence is never promoted as it is
    const m = t.cli(['trials', 'migrate', c, '--policy', POLICY_SMALL]);
    expect(m.json).toMatchObject({status: 'migrated', lifecycle: 'confirmed', bit_exact: true});
    expect(t.cli(['verify']).json.errors).toEqual([]);
    expect(t.cli(['promote', c]).json.status).toBe('promoted');
  });

  it(
    'refuses what is not a terminal candidate, and legacy rows ' +
      'that collapse to one pair identity (exit 8), writing nothing',
    () => {
      const t = tree();
      const c = t.propose('c', {
        'playbook/playbook.md': 'Be helpful and precise.\n',
        'routing_config/roles.json': '{"model_competitor": "small"}',
      });
      expect(t.cli(['screen', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('screened');
      makeLegacy(t.file(`candidates/${c}`));
      let before = treeHash(t.knowledge);
      const screened = t.cli(['trials', 'migrate', c, '--policy', POLICY_SMALL]);
      expect([screened.status, screened.json.error.code]).toEqual([2, 'INVALID_TRANSITION']);
      expect(treeHash(t.knowledge)).toBe(before);

      const d = t.propose('d', {
        'playbook/playbook.md': 'Be terse.\n',
        'routing_config/roles.json': '{"model_competitor": "small"}',
      });
      expect(t.cli(['confirm', d, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('confirmed');
      makeLegacy(t.file(`candidates/${d}`));
      const file = t.file(`candidates/${d}/matched_trials.json`);
      const rows = JSON.parse(fs.readFileSync(file, 'utf8'));
      const twin = {...rows[0], lane: 'heldout', fixture: 'renamed'};
      fs.writeFileSync(file, JSON.stringify([...rows, {...twin, pair_key: legacyPairKey(twin)}]));
      before = treeHash(t.knowledge);
      const collapsed = t.cli(['trials', 'migrate', d, '--policy', POLICY_SMALL]);
      expect(collapsed.status).toBe(8);
      expect(collapsed.json.error.message).toMatch(/duplicate current pair identity/);
      expect(treeHash(t.knowledge)).toBe(before);
      const missing = tempDir();
      dirs.push(missing);
      expect(t.cli(['trials', 'migrate', d, '--policy', path.join(missing, 'none.json')]).status).toBe(2);
    },
  );
});
