import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {stableDigest} from '../../src/canonical/index.js';
import {pythonFloatRepr} from '../../src/model/common/python-float.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {legacyCampaignStateDigest} from '../../src/model/index.js';
import {FIXTURES_12, evalArgs, fakeEnv, useTrees, type Tree} from '../helpers/pipeline.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {treeHash} from '../helpers/tree.js';

const FIXTURES_12B = path.join(PROJECT_ROOT, 'test/fixtures/fixtures-12b.jsonl');
const tree = useTrees();
const files = (text: string) => ({
  'playbook/playbook.md': text,
  'routing_config/roles.json': '{"model_competitor": "small"}',
});
const withFixtures = (args: string[], fixtures: string) => args.map((a) => (a === FIXTURES_12 ? fixtures : a));

describe('campaign mode', () => {
  it('reserves alpha before evaluation (durable, idempotent, summable) and raises z; campaign show reports it', () => {
    const t = tree();
    const a = t.propose('a', files('A'));
    const b = t.propose('b', files('B'));
    const ra = t.cli(['confirm', a, ...evalArgs(['--campaign', 'nightly'])], fakeEnv(t.dir));
    expect(ra.json.status).toBe('confirmed');
    const rb = t.cli(
      ['confirm', b, ...withFixtures(evalArgs(['--campaign', 'nightly']), FIXTURES_12B)],
      fakeEnv(t.dir),
    );
    expect(['confirmed', 'needs_more_evidence', 'inconclusive']).toContain(rb.json.status);
    const show = t.cli(['campaign', 'show', 'nightly']);
    expect(resultSchemaProblem('result-campaign-show', show.json)).toBeNull();
    expect(show.json.candidates.map((c: {allocated_alpha: number}) => c.allocated_alpha)).toEqual([0.025, 0.0125]);
    expect(show.json.candidates[1].required_confidence_z).toBeGreaterThan(
      show.json.candidates[0].required_confidence_z,
    );
    expect(show.json.alpha_left).toBeCloseTo(0.0125, 15);
    const bound = JSON.parse(t.read(`candidates/${a}/evaluator_plan.json`));
    expect(bound.plan.confirmation_policy.confidence_z).toBe(2.241402727605);
    // The campaign is autoctx's addition: beside the plan, never inside it (the Python coordinator resumes the plan).
    expect(bound.additions.campaign_id).toBe('nightly');
    expect(bound.plan).not.toHaveProperty('campaign_id');
    // Re-running reserves nothing new.
    const ledger = t.read('promotion-risk/nightly/false-promotion.json');
    t.cli(['confirm', a, ...evalArgs(['--campaign', 'nightly'])], fakeEnv(t.dir));
    expect(t.read('promotion-risk/nightly/false-promotion.json')).toBe(ledger);
  });

  it(
    'refuses a fixture an earlier candidate of the campaign ' + 'reserved, also after a restart, and changes nothing',
    () => {
      const t = tree();
      const a = t.propose('a', files('A'));
      const b = t.propose('b', files('B'));
      expect(t.cli(['screen', a, ...evalArgs(['--campaign', 'c1'])], fakeEnv(t.dir)).status).toBe(0);
      const before = t.read('promotion-risk/c1/false-promotion.json');
      const r = t.cli(['screen', b, ...evalArgs(['--campaign', 'c1'])], fakeEnv(t.dir));
      expect([r.status, r.json.error.code]).toEqual([2, 'CAMPAIGN_FIXTURE_REUSE']);
      // A refused candidate consumes no alpha and reserves no fixtures: the ledger is as it was, byte for byte, however
      // often it is tried.
      expect(t.read('promotion-risk/c1/false-promotion.json')).toBe(before);
      expect(fs.existsSync(t.file(`candidates/${b}/evaluator_plan.json`))).toBe(false);
      for (let i = 0; i < 3; i++) {
        const again = t.cli(['screen', b, ...evalArgs(['--campaign', 'c1'])], fakeEnv(t.dir));
        expect(again.json.error.code).toBe('CAMPAIGN_FIXTURE_REUSE');
      }
      expect(t.read('promotion-risk/c1/false-promotion.json')).toBe(before);
    },
  );

  it('a different campaign policy is refused; a campaign id with a slash gets a digest folder', () => {
    const t = tree();
    const a = t.propose('a', files('A'));
    const policy = path.join(t.dir, 'cp.json');
    fs.writeFileSync(policy, JSON.stringify({familywise_alpha: 0.1}));
    expect(t.cli(['screen', a, ...evalArgs(['--campaign', 'team/nightly'])], fakeEnv(t.dir)).status).toBe(0);
    expect(fs.readdirSync(t.file('promotion-risk'))[0]).toMatch(/^%[0-9a-f]{64}$/);
    const before = treeHash(t.knowledge);
    const r = t.cli(
      ['confirm', a, ...evalArgs(['--campaign', 'team/nightly', '--campaign-policy', policy])],
      fakeEnv(t.dir),
    );
    expect([r.status, r.json.error.code]).toEqual([2, 'CAMPAIGN_POLICY_MISMATCH']);
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it(
    'a schema-1 ledger with reservations is readable but fails ' + 'closed for new candidates: start a new campaign id',
    () => {
      const t = tree();
      const a = t.propose('a', files('A'));
      const b = t.propose('b', files('B'));
      expect(t.cli(['screen', a, ...evalArgs(['--campaign', 'old'])], fakeEnv(t.dir)).status).toBe(0);
      const ledgerFile = t.file('promotion-risk/old/false-promotion.json');
      const v2 = JSON.parse(fs.readFileSync(ledgerFile, 'utf8'));
      const {
        fixture_reservations: _f,
        fixture_history_complete: _h,
        state_digest: _s,
        ...v1
      } = {...v2, schema_version: 1};
      fs.writeFileSync(ledgerFile, JSON.stringify({...v1, state_digest: legacyCampaignStateDigest(v1)}));
      expect(t.cli(['verify']).json.errors).toEqual([]);
      expect(t.cli(['campaign', 'show', 'old']).json.fixture_history_complete).toBe(false);
      const before = treeHash(t.knowledge);
      const r = t.cli(['screen', b, ...withFixtures(evalArgs(['--campaign', 'old']), FIXTURES_12B)], fakeEnv(t.dir));
      expect([r.status, r.json.error.code]).toEqual([8, 'CAMPAIGN_LEGACY']);
      expect(r.json.error.message).toMatch(/start a new campaign id/);
      expect(treeHash(t.knowledge)).toBe(before);
    },
  );

  it('promotion needs the campaign authorization, written as an immutable artifact', () => {
    const t = tree();
    const a = t.propose('a', files('A'));
    expect(
      t.cli(
        ['confirm', a, ...evalArgs(['--campaign', 'auth'])],
        fakeEnv(t.dir, {FAKE_DELTA: '0.3', FAKE_NOISE: '0.02'}),
      ).json.status,
    ).toBe('confirmed');
    const p = t.cli(['promote', a]);
    expect(p.json.status).toBe('promoted');
    const artifact = JSON.parse(t.read(`promotion-risk/auth/reservation-artifacts/${a}.json`));
    expect(artifact.risk_reservation).toMatchObject({status: 'authorized', candidate_digest: a});
    expect(t.cli(['verify']).json.errors).toEqual([]);
  });

  it('a blocked campaign gate is terminal: negative result, rejected, exit 3', () => {
    const t = tree();
    const a = t.propose('a', files('A'));
    // Confirmation clears the ordinary interval over 2 pairs of one... but the campaign needs 2 independent blocks:
    // with every confirmation seed on one fixture the gate cannot authorize.
    const one = path.join(t.dir, 'one-block.jsonl');
    const lines = [
      {fixture: 's', initial_state: 's', observation: 1, lane: 'screen'},
      ...Array.from({length: 4}, (_, i) => ({
        fixture: `c${i}`,
        initial_state: `c${i}`,
        observation: 1,
        lane: 'confirmation',
      })),
      {fixture: 'h', initial_state: 'h', observation: 1, lane: 'heldout'},
    ];
    fs.writeFileSync(one, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const policy = path.join(t.dir, 'cp.json');
    fs.writeFileSync(
      policy,
      JSON.stringify({min_independent_confirmation_blocks: 2, robust_method: 'bounded_hoeffding'}),
    );
    const c = t.cli(
      ['confirm', a, ...withFixtures(evalArgs(['--campaign', 'blk', '--campaign-policy', policy]), one)],
      fakeEnv(t.dir, {FAKE_DELTA: '0.3', FAKE_NOISE: '0.01'}),
    );
    expect(c.json.status).toBe('confirmed');
    const r = t.cli(['promote', a]);
    expect(r.status).toBe(3);
    expect(r.json).toMatchObject({
      status: 'rejected',
      reason: expect.stringMatching(/^false-promotion gate blocked: /),
    });
    expect(JSON.parse(t.read(`candidates/${a}/record.json`)).lifecycle).toBe('rejected');
    expect(JSON.parse(t.read(`candidates/${a}/negative_result.json`)).entries[0].result_id).toBe(
      `context-bundle-${a}-false-promotion-blocked`,
    );
    const ledger = JSON.parse(t.read('promotion-risk/blk/false-promotion.json'));
    expect(ledger.reservations[0].status).toBe('blocked');
    // As upstream writes it: the reservation's own digest (not its artifact's), then the evidence digest.
    const reservation = ledger.reservations[0];
    const rationale = JSON.parse(t.read(`candidates/${a}/record.json`)).rationale;
    expect(rationale).toMatch(
      /^false-promotion gate blocked: .+; reservation_sha256=[0-9a-f]{64}; evidence_sha256=[0-9a-f]{64}$/,
    );
    expect(
      rationale.endsWith(
        `; reservation_sha256=${stableDigest(reservation)}; evidence_sha256=${reservation.evidence_digest}`,
      ),
    ).toBe(true);
    // The ledger's reference to the reservation, in upstream's words (its URI relative to the knowledge root, where
    // upstream's is absolute).
    const negative = JSON.parse(t.read(`candidates/${a}/negative_result.json`));
    const artifact = JSON.parse(t.read(`promotion-risk/blk/reservation-artifacts/${a}.json`));
    expect(negative.entries[0].evidence_refs[1]).toEqual({
      uri: `demo/context_bundles/promotion-risk/blk/reservation-artifacts/${a}.json#sha256=${artifact.artifact_digest}`,
      summary:
        `Campaign reservation status=blocked; reservation_sha256=${stableDigest(reservation)}; ` +
        `allocated_alpha=${pythonFloatRepr(reservation.allocated_alpha)}; ` +
        `trial_evidence_sha256=${reservation.evidence_digest}.`,
    });
    // Both timestamps are the record's created_at, as upstream writes them.
    const record = JSON.parse(t.read(`candidates/${a}/record.json`));
    expect([negative.generated_at, negative.entries[0].occurred_at]).toEqual([record.created_at, record.created_at]);
    expect(rationale).not.toContain(
      JSON.parse(t.read(`promotion-risk/blk/reservation-artifacts/${a}.json`)).artifact_digest,
    );
  });
});
