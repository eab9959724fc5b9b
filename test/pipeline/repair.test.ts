import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {canonicalJson} from '../../src/canonical/index.js';
import {legacyPairKey} from '../../src/model/index.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCli} from '../helpers/cli.js';
import {copySampleKnowledge, treeHash, withoutRecordHistories} from '../helpers/tree.js';
import {evalArgs, fakeEnv, useTrees, type Tree} from '../helpers/pipeline.js';
import {requireBundle} from '../../src/store/kinds/bundle/bundle.js';
import {readRecord} from '../../src/store/kinds/promotion/candidate-record.js';

const PROMOTED = '6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252';

function sample() {
  const k = copySampleKnowledge();
  const base = path.join(k, 'demo/context_bundles');
  const cli = (args: string[]) => runCli([...args, '--knowledge', k, '--json']);
  return {k, base, cli, file: (rel: string) => path.join(base, rel)};
}

describe('verify warnings and repair', () => {
  it('a pointer moved but lifecycles not yet updated is a warning; repair completes it', () => {
    const s = sample();
    const rec = s.file(`candidates/${PROMOTED}/record.json`);
    fs.writeFileSync(rec, JSON.stringify({...JSON.parse(fs.readFileSync(rec, 'utf8')), lifecycle: 'confirmed'}));
    fs.writeFileSync(s.file('.active.json.autoctx-abc123.tmp'), '{');
    const v = s.cli(['verify']);
    expect(v.status).toBe(0);
    expect(v.json.warnings.map((w: {code: string}) => w.code).sort()).toEqual(['LEFTOVER_TEMP', 'LIFECYCLE_PENDING']);
    const r = s.cli(['repair']);
    expect(resultSchemaProblem('result-repair', r.json)).toBeNull();
    expect(r.json.actions.some((a: string) => a.includes('lifecycle'))).toBe(true);
    // The temporary file is gone too (every writer sweeps them under the lock).
    expect(fs.existsSync(s.file('.active.json.autoctx-abc123.tmp'))).toBe(false);
    expect(s.cli(['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});
    expect(JSON.parse(fs.readFileSync(rec, 'utf8')).lifecycle).toBe('active');
  });

  it(
    'legacy (schema-1) evidence is read, replayed, and rewritten ' +
      'to schema 2 only after the replay reproduces the record',
    () => {
      const s = sample();
      const file = s.file(`candidates/${PROMOTED}/matched_trials.json`);
      const original = JSON.parse(fs.readFileSync(file, 'utf8'));
      const legacy = original.trials.map((t: Record<string, unknown>) => ({...t, pair_key: legacyPairKey(t as never)}));
      fs.writeFileSync(file, JSON.stringify(legacy));
      expect(s.cli(['verify']).json.errors).toEqual([]);
      expect(s.cli(['replay', PROMOTED]).json).toMatchObject({status: 'ok', bit_exact: true});
      const r = s.cli(['repair']);
      expect(r.json.actions.some((a: string) => a.startsWith('migrated'))).toBe(true);
      expect(canonicalJson(JSON.parse(fs.readFileSync(file, 'utf8')))).toBe(canonicalJson(original));
    },
  );

  it('legacy rows that collapse to one current pair identity fail closed', () => {
    const s = sample();
    const file = s.file(`candidates/${PROMOTED}/matched_trials.json`);
    const trials = JSON.parse(fs.readFileSync(file, 'utf8')).trials;
    const a = {...trials[0], pair_key: legacyPairKey(trials[0])};
    const b = {...trials[0], lane: 'heldout', fixture: 'renamed'};
    fs.writeFileSync(file, JSON.stringify([a, {...b, pair_key: legacyPairKey(b)}]));
    const v = s.cli(['verify']);
    expect(v.status).toBe(8);
    expect(v.json.errors.map((e: {code: string}) => e.code)).toContain('DUPLICATE_PAIR');
    const r = s.cli(['replay', PROMOTED]);
    expect(r.status).toBe(8);
    expect(r.json.error.message).toMatch(/duplicate current pair identity/);
  });

  it('legacy evidence that does not reproduce its record is left untouched', () => {
    const s = sample();
    const file = s.file(`candidates/${PROMOTED}/matched_trials.json`);
    const trials = JSON.parse(fs.readFileSync(file, 'utf8')).trials;
    trials[0].candidate_score = 0.1;
    const legacy = JSON.stringify(
      trials.map((t: Record<string, unknown>) => ({...t, pair_key: legacyPairKey(t as never)})),
    );
    fs.writeFileSync(file, legacy);
    const r = s.cli(['repair']);
    expect(r.json.remaining.some((x: string) => x.includes('does not reproduce'))).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(legacy);
  });
});

describe('negative results', () => {
  it(
    'equal the one the Python implementation wrote for its rejected ' +
      "candidate, its times included (both are the record's created_at)",
    async () => {
      const {KnowledgeStore} = await import('../../src/store/index.js');
      const {negativeResultFor} = await import('../../src/core/promotion/negative.js');
      const s = sample();
      const digest = '28c6b3dd75f91e22e276a5095ab79804f165e6e38ac632c9d228a43ff4cd2ada';
      const store = KnowledgeStore.open(s.k).scenario('demo');
      const python = JSON.parse(fs.readFileSync(s.file(`candidates/${digest}/negative_result.json`), 'utf8'));
      const ours = negativeResultFor(
        store,
        requireBundle(store, digest),
        readRecord(store, digest)!,
        'rejected',
        'candidate failed the cheap matched screen',
      );
      expect(canonicalJson(ours.document)).toBe(canonicalJson(python));
    },
  );
});

describe('what verify finds that no replay would', () => {
  const tree = useTrees();
  const confirmed = (t: Tree) => {
    const c = t.propose('cand', {
      'playbook/playbook.md': 'Be helpful and precise.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('confirmed');
    return c;
  };
  const codes = (r: {json: {errors: {code: string; file: string}[]; warnings: {code: string}[]}}) => [
    r.json.errors.map((e) => `${e.code} ${path.basename(e.file)}`).sort(),
    r.json.warnings.map((w) => w.code),
  ];

  it('a score changed by one unit in the last place is caught by the evidence seal; repair leaves it alone', () => {
    const t = tree();
    const c = confirmed(t);
    const file = t.file(`candidates/${c}/matched_trials.json`);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    const f64 = new Float64Array([doc.trials[0].candidate_score]);
    new BigInt64Array(f64.buffer)[0]! += 1n;
    doc.trials[0].candidate_score = f64[0];
    fs.writeFileSync(file, JSON.stringify(doc, null, 2));
    const v = t.cli(['verify']);
    expect(v.status).toBe(8);
    expect(codes(v)[0]).toEqual(
      expect.arrayContaining([
        'EVIDENCE_SEAL_MISMATCH matched_trials.json',
        'EVIDENCE_SEAL_MISMATCH evidence_seal.json',
      ]),
    );
    const r = t.cli(['repair']);
    expect(r.json.remaining.some((x: string) => x.includes('evidence_seal.json'))).toBe(true);
    expect(t.cli(['verify']).status).toBe(8);
    // A run on edited evidence is refused before it reserves, binds or seals anything.
    const before = treeHash(t.knowledge);
    const again = t.cli(['confirm', c, ...evalArgs(['--campaign', 'later'])], fakeEnv(t.dir));
    expect([again.status, again.json.error.code, again.json.error.message]).toEqual([
      8,
      'INTEGRITY',
      expect.stringMatching(/differ from evidence_seal\.json/),
    ]);
    expect(again.stderr.trim().split('\n').length).toBeLessThanOrEqual(1);
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it(
    "a run killed between a pair's evidence and its seal leaves a warning " +
      'that repair seals; a decided record that lost seals is an error',
    () => {
      const t = tree();
      const c = t.propose('cand', {
        'playbook/playbook.md': 'Be helpful and precise.\n',
        'routing_config/roles.json': '{"model_competitor": "small"}',
      });
      const trace = path.join(t.dir, 'trace');
      t.cli(['confirm', c, ...evalArgs()], {...fakeEnv(t.dir), AUTOCTX_FAULT_TRACE: trace});
      const points = fs
        .readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '));
      // The third pair's evidence write: the record then is screened (decided), its seal one pair behind.
      const third = points.filter(([p, f]) => p!.endsWith(':after') && f === 'matched_trials.json')[2]![0]!;
      const u = tree();
      const d = u.propose('cand', {
        'playbook/playbook.md': 'Be helpful and precise.\n',
        'routing_config/roles.json': '{"model_competitor": "small"}',
      });
      expect(u.cli(['confirm', d, ...evalArgs()], {...fakeEnv(u.dir), AUTOCTX_FAULT: third}).status).toBe(null);
      // (the kill also leaves the scenario's and the run's locks and a temp file, which the next writer takes over or
      // removes)
      expect(codes(u.cli(['verify']))).toEqual([
        [],
        ['LEFTOVER_LOCK', 'LEFTOVER_TEMP', 'LEFTOVER_LOCK', 'UNSEALED_TRIALS', 'RECORD_BEHIND_EVIDENCE'],
      ]);
      expect(u.cli(['repair']).json.actions.some((a: string) => a.startsWith('sealed'))).toBe(true);
      expect(codes(u.cli(['verify']))).toEqual([[], []]);
      // A confirmed record whose seal lost a trial was decided on trials no seal vouches for: never a crash state.
      const e = confirmed(t);
      const file = t.file(`candidates/${e}/evidence_seal.json`);
      const seal = JSON.parse(fs.readFileSync(file, 'utf8'));
      delete seal.trial_digests[Object.keys(seal.trial_digests)[0]!];
      fs.writeFileSync(file, JSON.stringify(seal));
      expect(codes(t.cli(['verify']))).toEqual([
        ['UNSEALED_DECISION evidence_seal.json', 'UNSEALED_DECISION record.json'],
        ['UNSEALED_TRIALS'],
      ]);
      const before = treeHash(t.knowledge);
      expect(t.cli(['repair']).json.remaining).toEqual([
        expect.stringContaining('decided on more pairs than evidence_seal.json seals'),
      ]);
      expect(treeHash(t.knowledge)).toBe(before);
    },
  );

  it('a replay within the cross-runtime tolerance but not bit for bit fails unless --replay-tolerance is given', () => {
    const t = tree();
    const c = confirmed(t);
    const file = t.file(`candidates/${c}/record.json`);
    const rec = JSON.parse(fs.readFileSync(file, 'utf8'));
    const f64 = new Float64Array([rec.comparison.confidence_high]);
    new BigInt64Array(f64.buffer)[0]! += 2n;
    rec.comparison.confidence_high = f64[0];
    fs.writeFileSync(file, JSON.stringify(rec, null, 2));
    // As another runtime wrote it: a record with no history of autoctx's.
    withoutRecordHistories(t.knowledge);
    const strict = t.cli(['verify']);
    expect([strict.status, codes(strict)[0]]).toEqual([
      8,
      ['REPLAY_MISMATCH matched_trials.json', 'REPLAY_MISMATCH record.json'],
    ]);
    const tolerant = t.cli(['verify', '--replay-tolerance']);
    expect([tolerant.status, codes(tolerant)]).toEqual([0, [[], ['REPLAY_TOLERANCE']]]);
  });

  it("an edited mirror is an error and repair rewrites it; another bundle's text is an interrupted move", () => {
    const t = tree();
    const c = confirmed(t);
    const mirror = path.join(t.knowledge, 'demo/playbook.md');
    fs.writeFileSync(mirror, 'Ignore the rules.\n');
    const v = t.cli(['verify']);
    expect([v.status, codes(v)[0]]).toEqual([8, ['MIRROR_MISMATCH playbook.md']]);
    t.cli(['repair']);
    expect(fs.readFileSync(mirror, 'utf8')).toBe('Be helpful.\n');
    fs.writeFileSync(
      mirror,
      JSON.parse(fs.readFileSync(t.file(`bundles/${c}.json`), 'utf8')).components.find(
        (x: {kind: string}) => x.kind === 'playbook',
      ).content,
    );
    expect(codes(t.cli(['verify']))).toEqual([[], ['STALE_MIRROR']]);
  });

  it('a .gitignore without the lock and temp rules is an error; init restores them', () => {
    const t = tree();
    const ignore = path.join(t.knowledge, '.gitignore');
    fs.writeFileSync(ignore, fs.readFileSync(ignore, 'utf8').replace('*.tmp\n', ''));
    const v = t.cli(['verify']);
    expect([v.status, codes(v)[0]]).toEqual([8, ['GITIGNORE_INCOMPLETE .gitignore']]);
    expect(t.cli(['init', '--scenario', 'demo', '--from', path.join(t.dir, 'baseline')]).status).toBe(0);
    expect(t.cli(['verify']).status).toBe(0);
  });
});
