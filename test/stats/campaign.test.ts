import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {
  authorizeCampaignPromotion,
  campaignAlphaForCandidate,
  confirmationBlocksReady,
  confirmationPolicyDigest,
  createCampaignFalsePromotionState,
  createCandidateFixtureReservation,
  createCandidateRiskReservation,
  createMatchedTrial,
  evaluateCampaignEvidence,
  evaluateMatchedTrials,
  requiredConfidenceZ,
  validateCampaignPolicy,
  validateBundle,
  type CampaignFalsePromotionPolicy,
  type CandidateRiskReservation,
  type ConfirmationPolicy,
  type MatchedTrial,
  type TrialLane,
} from '../../src/model/index.js';
import {FIXTURES} from '../helpers/paths.js';

const parity = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'false-promotion-parity.json'), 'utf8'));
const tested = validateBundle(
  JSON.parse(fs.readFileSync(path.join(FIXTURES, 'causal-attribution-manifest-parity.json'), 'utf8')).tested,
);
const campaignPolicy: CampaignFalsePromotionPolicy = validateCampaignPolicy(parity.campaign_policy);
const basePolicy: ConfirmationPolicy = parity.base_confirmation_policy;

describe('false-promotion-parity.json', () => {
  type Allocation = {candidate_index: number; alpha: number; required_confidence_z: number};
  const allocations: Array<[number, Allocation]> = parity.candidate_allocations.map((a: Allocation) => [
    a.candidate_index,
    a,
  ]);
  it.each(allocations)(
    'allocation and required z of candidate %i',
    (_i, {candidate_index, alpha, required_confidence_z}) => {
      const allocated = campaignAlphaForCandidate(campaignPolicy, candidate_index);
      expect(allocated).toBe(alpha);
      expect(allocated.toFixed(15)).toBe(alpha.toFixed(15));
      expect(requiredConfidenceZ(allocated)).toBe(required_confidence_z);
    },
  );

  it('requiredConfidenceZ(Number.MIN_VALUE) is finite and above 38; it is conservative at extreme alpha', () => {
    const z = requiredConfidenceZ(Number.MIN_VALUE);
    expect(Number.isFinite(z) && z > 38).toBe(true);
  });

  const fresh = () =>
    createCandidateRiskReservation({
      campaign_id: parity.persisted_state_case.campaign_id,
      candidate: tested,
      candidate_index: 0,
      policy: campaignPolicy,
      base_policy: basePolicy,
    });

  it('the persisted state case: effective policy digest and state digest', () => {
    const {reservation, confirmation_policy} = fresh();
    expect(confirmation_policy.confidence_z).toBe(2.053748910632);
    expect(confirmationPolicyDigest(confirmation_policy)).toBe(
      parity.persisted_state_case.expected_confirmation_policy_digest,
    );
    expect(reservation.confirmation_policy_digest).toBe(
      parity.persisted_state_case.expected_confirmation_policy_digest,
    );
    const state = createCampaignFalsePromotionState({
      campaign_id: 'parity-campaign',
      policy: campaignPolicy,
      reservations: [reservation],
      fixture_reservations: [],
      fixture_history_complete: true,
    });
    expect(state.state_digest).toBe(parity.persisted_state_case.expected_state_digest);
  });

  type StatusCase = Pick<
    CandidateRiskReservation,
    'status' | 'reason' | 'evidence_digest' | 'independent_confirmation_blocks' | 'independent_heldout_blocks'
  > & {expected_state_digest: string};
  const statusCases: Array<[string, StatusCase]> = parity.reservation_status_cases.map((c: StatusCase) => [
    c.status,
    c,
  ]);
  it.each(statusCases)('state digest with a %s reservation', (_s, {expected_state_digest, ...fields}) => {
    const reservation: CandidateRiskReservation = {...fresh().reservation, ...fields};
    const state = createCampaignFalsePromotionState({
      campaign_id: 'parity-campaign',
      policy: campaignPolicy,
      reservations: [reservation],
      fixture_reservations: [],
      fixture_history_complete: true,
    });
    expect(state.state_digest).toBe(expected_state_digest);
  });

  const trialsOf = (observations: Array<{lane: TrialLane; block: string; seed: number; delta: number}>) =>
    observations.map((o) =>
      createMatchedTrial({
        candidate_digest: tested.digest,
        incumbent_digest: tested.parent_digest,
        evaluator_epoch: tested.evaluator_epoch,
        cohort: 'parity-cohort',
        fixture: `fixture-${o.seed}`,
        fixture_digest: o.block,
        seed: o.seed,
        lane: o.lane,
        candidate_score: 0.5 + o.delta,
        incumbent_score: 0.5,
      }),
    );

  type EvidenceCase = {
    name: string;
    observations: Array<{lane: TrialLane; block: string; seed: number; delta: number}>;
    expected: object;
  };
  const evidenceCases: Array<[string, EvidenceCase]> = parity.evidence_cases.map((c: EvidenceCase) => [c.name, c]);
  it.each(evidenceCases)('evidence case %s', (_n, {observations, expected}) => {
    const {confirmation_policy} = fresh();
    expect(evaluateCampaignEvidence(trialsOf(observations), confirmation_policy, campaignPolicy)).toEqual(expected);
  });

  describe('authorization refuses what does not match the reservation', () => {
    const setup = () => {
      const {reservation, confirmation_policy} = fresh();
      const trials = trialsOf(parity.evidence_cases[0].observations);
      const plan = createCandidateFixtureReservation({
        campaign_id: 'parity-campaign',
        candidate_digest: tested.digest,
        evaluator_epoch: tested.evaluator_epoch,
        cohort: 'parity-cohort',
        units: trials.map((t) => ({lane: t.lane, fixture_digest: t.fixture_digest, seed: t.seed})),
      });
      const comparison = evaluateMatchedTrials(tested, trials, confirmation_policy);
      return {reservation, confirmation_policy, trials, plan, comparison};
    };
    const authorize = (s: ReturnType<typeof setup>, trials: MatchedTrial[] = s.trials) =>
      authorizeCampaignPromotion({
        candidate: tested,
        comparison: s.comparison,
        trials,
        confirmation_policy: s.confirmation_policy,
        campaign_policy: campaignPolicy,
        reservation: s.reservation,
        fixture_reservation: s.plan,
      });

    it('authorizes the independent disjoint blocks and binds the evidence digest', () => {
      const s = setup();
      expect(s.comparison.decision).toBe('confirmed');
      const r = authorize(s);
      expect(r).toMatchObject({authorized: true, independent_confirmation_blocks: 2, independent_heldout_blocks: 1});
      expect(r.reservation).toMatchObject({
        status: 'authorized',
        evidence_digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      // Idempotent for the same evidence, never rebound to other evidence.
      expect(authorize({...s, reservation: r.reservation}).authorized).toBe(true);
    });
    it.each<[string, (s: ReturnType<typeof setup>) => unknown, RegExp]>([
      [
        'a forged candidate digest',
        (s) =>
          authorize(
            s,
            s.trials.map((t) => ({...t, candidate_digest: 'f'.repeat(64)})),
          ),
        /candidate digest/,
      ],
      [
        'a non-boolean validity flag',
        (s) =>
          authorize(
            s,
            s.trials.map((t, i) => (i === 1 ? {...t, candidate_valid: 'true' as unknown as boolean} : t)),
          ),
        /non-boolean validity/,
      ],
      [
        'a policy other than the reserved one',
        (s) =>
          authorize({
            ...s,
            confirmation_policy: {...s.confirmation_policy, min_effect: 0.001},
            comparison: evaluateMatchedTrials(tested, s.trials, {...s.confirmation_policy, min_effect: 0.001}),
          }),
        /policy different/,
      ],
      [
        'wrong lineage',
        (s) => authorize({...s, reservation: {...s.reservation, evaluator_epoch: 'epoch-2'}}),
        /lineage/,
      ],
      [
        'a non-pristine reservation with other evidence',
        (s) =>
          authorize({...s, reservation: {...s.reservation, status: 'authorized', evidence_digest: '0'.repeat(64)}}),
        /cannot be rebound/,
      ],
      [
        'a fixture outside the plan',
        (s) => authorize({...s, plan: createCandidateFixtureReservation({...s.plan, units: s.plan.units.slice(1)})}),
        /outside its reserved plan/,
      ],
      [
        'a relabeled lane',
        (s) =>
          authorize({
            ...s,
            plan: createCandidateFixtureReservation({
              ...s.plan,
              units: s.plan.units.map((u, i) => (i === 3 ? {...u, lane: 'confirmation' as const} : u)),
            }),
          }),
        /relabels a reserved fixture lane/,
      ],
      ['a wrong plan digest', (s) => authorize({...s, plan: {...s.plan, plan_digest: '0'.repeat(64)}}), /plan digest/],
    ])('%s', (_n, run, message) => {
      expect(() => run(setup())).toThrow(message);
    });
  });
});

describe('campaign gate methods and the blocks-ready rule', () => {
  const base: ConfirmationPolicy = {
    min_screen_pairs: 1,
    min_confirmation_pairs: 2,
    max_confirmation_pairs: 10,
    min_heldout_pairs: 1,
    min_effect: 0,
    confidence_z: 2.241402727605,
  };
  const make = (confDeltas: number[], heldDeltas: number[], sameFixture = false) => {
    let seed = 0;
    const t = (lane: TrialLane, d: number, fixture: string) =>
      createMatchedTrial({
        candidate_digest: 'c'.repeat(64),
        incumbent_digest: 'p'.repeat(64),
        evaluator_epoch: 'e',
        cohort: 'k',
        fixture,
        fixture_digest: fixture,
        seed: seed++,
        lane,
        candidate_score: d,
        incumbent_score: 0,
      });
    return [
      ...confDeltas.map((d, i) => t('confirmation', d, sameFixture ? 'shared' : `c${i}`)),
      ...heldDeltas.map((d, i) => t('heldout', d, `h${i}`)),
    ];
  };
  const policyOf = (robust_method: CampaignFalsePromotionPolicy['robust_method']) =>
    validateCampaignPolicy({...parity.campaign_policy, robust_method, familywise_alpha: 0.05});

  it('repeated seeds of one fixture are one block and never look independent', () => {
    const trials = make([0.3, 0.31, 0.29, 0.3], [0.3], true);
    expect(evaluateCampaignEvidence(trials, base, policyOf('cluster_t'))).toMatchObject({
      authorized: false,
      independent_confirmation_blocks: 1,
    });
    expect(confirmationBlocksReady(trials, base, policyOf('cluster_t'))).toBe(false);
  });

  it('hoeffding and the betting test refuse effects outside the declared bounds', () => {
    for (const m of ['bounded_hoeffding', 'bounded_betting'] as const) {
      expect(evaluateCampaignEvidence(make([0.3, 0.3, 1.5], [0.3]), base, policyOf(m)).reason).toBe(
        'paired effect falls outside the predeclared robust bounds',
      );
    }
  });

  it('with little spread, the betting test clears with far fewer blocks than Hoeffding', () => {
    const deltas = Array.from({length: 80}, (_, i) => 0.4 + (i % 2 ? 0.01 : -0.01));
    const first = (m: 'bounded_hoeffding' | 'bounded_betting') => {
      for (let n = 2; n <= 80; n++)
        if (
          evaluateCampaignEvidence(make(deltas.slice(0, n), [0.4]), {...base, max_confirmation_pairs: 80}, policyOf(m))
            .authorized
        )
          return n;
      return Infinity;
    };
    const betting = first('bounded_betting');
    const hoeffding = first('bounded_hoeffding');
    expect(betting).toBeLessThan(hoeffding / 2);
  });

  it('blocks are ready once the row budget is spent', () => {
    const trials = make(Array(10).fill(0.01), [0.3]);
    expect(confirmationBlocksReady(trials, base, policyOf('cluster_t'))).toBe(true);
  });
});

describe('fast canonical encodings', () => {
  it(
    'riskEvidenceDigest equals the digest of the trials with ' +
      'pair keys, sorted by pair key, in generic canonical JSON',
    async () => {
      const {riskEvidenceDigest, createMatchedTrial} = await import('../../src/model/index.js');
      const {stableDigest} = await import('../../src/canonical/index.js');
      const trials = [3, 1, 2].map((seed) =>
        createMatchedTrial({
          candidate_digest: 'c'.repeat(64),
          incumbent_digest: null,
          evaluator_epoch: 'e\u00e9',
          cohort: 'k"\\',
          fixture: `f${seed}`,
          fixture_digest: `d${seed}`,
          seed,
          lane: 'confirmation',
          candidate_score: 0.1 * seed,
          incumbent_score: -0,
          candidate_valid: seed !== 2,
        }),
      );
      const expected = stableDigest([...trials].sort((a, b) => (a.pair_key < b.pair_key ? -1 : 1)));
      expect(riskEvidenceDigest(trials)).toBe(expected);
    },
  );
});

describe('fixture plan digest', () => {
  it('equals the generic canonical digest and the plan digests the Python implementation wrote', async () => {
    const {fixturePlanDigest} = await import('../../src/model/index.js');
    const {stableDigest} = await import('../../src/canonical/index.js');
    const ledger = JSON.parse(
      fs.readFileSync(
        path.join(
          FIXTURES,
          'sample-knowledge/knowledge/demo/context_bundles/promotion-risk/run-1/false-promotion.json',
        ),
        'utf8',
      ),
    );
    for (const r of ledger.fixture_reservations) {
      const {plan_digest, ...body} = r;
      expect(fixturePlanDigest(body)).toBe(plan_digest);
      expect(stableDigest(body)).toBe(plan_digest);
    }
  });
});
