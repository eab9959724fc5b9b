import {jsonEqual} from '../../canonical/index.js';
import {AutoctxError, fail} from '../../errors.js';
import type {ContextBundle} from '../../model/bundle/bundle.js';
import {
  campaignAlphaForCandidate,
  createCampaignFalsePromotionState,
  createCandidateFixtureReservation,
  createCandidateRiskReservation,
  DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY,
  validateCampaignPolicy,
  type CampaignFalsePromotionPolicy,
  type CampaignFalsePromotionState,
  type CandidateFixtureReservation,
  type CandidateRiskReservation,
} from '../../model/evaluation/campaign.js';
import {reservationArtifactDigest} from '../../model/evaluation/evidence-digests.js';
import type {PlanUnit} from '../../model/evaluation/fixtures.js';
import {confirmationPolicyDigest, type ConfirmationPolicy} from '../../model/evaluation/policy.js';
import {readInputJson, type ScenarioStore, type StoredCampaign} from '../../store/index.js';
import {openScenario, type StoreOptions} from '../common/store-options.js';
import {readCampaign, writeCampaign, writeReservationArtifact} from '../../store/kinds/evaluation/campaign-ledger.js';

/** The campaign policy a flag names, if any (a JSON file with the seven fields; missing ones take the defaults). */
export function loadCampaignPolicy(file: string | undefined): CampaignFalsePromotionPolicy | undefined {
  if (file === undefined) return undefined;
  const value = readInputJson(file);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('SCHEMA_VIOLATION', `${file}: a campaign policy must be a JSON object`);
  try {
    return validateCampaignPolicy({...DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY, ...value});
  } catch (error) {
    if (error instanceof AutoctxError) throw new AutoctxError(error.code, `${file}: ${error.message}`, {file});
    throw error;
  }
}

/**
 * Load and check a campaign's ledger, all fail closed: the stored policy is
 * the policy (a different one given is refused), candidate indices run 0..n−1,
 * every allocation equals the recomputed one, fixture reservations belong to
 * reserved candidates and each fixture has one owner.
 */
export function loadCampaign(
  store: ScenarioStore,
  campaignId: string,
  requested: CampaignFalsePromotionPolicy | undefined,
): {state: CampaignFalsePromotionState; policy: CampaignFalsePromotionPolicy; complete: boolean} {
  const stored: StoredCampaign | null = readCampaign(store, campaignId);
  if (!stored) {
    const policy = requested ?? {...DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY};
    return {
      state: createCampaignFalsePromotionState({
        campaign_id: campaignId,
        policy,
        reservations: [],
        fixture_reservations: [],
        fixture_history_complete: true,
      }),
      policy,
      complete: true,
    };
  }
  const file = store.guard.relative(store.paths.campaignLedger(campaignId));
  const bad = (why: string): never => fail('INTEGRITY', `${file}: ${why}`);
  const policy = validateCampaignPolicy(stored.policy);
  if (requested && !jsonEqual(requested, stored.policy))
    fail(
      'CAMPAIGN_POLICY_MISMATCH',
      `campaign ${JSON.stringify(campaignId)} was reserved under another policy; a campaign's policy cannot change`,
    );
  stored.reservations.forEach((r, i) => {
    if (r.candidate_index !== i) bad('candidate indices are not contiguous');
    if (r.allocated_alpha !== campaignAlphaForCandidate(policy, i))
      bad(`the allocation of candidate ${i} does not match the policy`);
  });
  const fixtures = stored.fixture_reservations ?? [];
  const risk = new Set(stored.reservations.map((r) => r.candidate_digest));
  const owners = new Map<string, string>();
  for (const f of fixtures) {
    if (!risk.has(f.candidate_digest)) bad('a fixture reservation has no risk reservation');
    for (const u of f.units) {
      const owner = owners.get(u.fixture_digest);
      if (owner && owner !== f.candidate_digest) bad('a fixture is reserved by several candidates');
      owners.set(u.fixture_digest, f.candidate_digest);
    }
  }
  if (new Set(fixtures.map((f) => f.candidate_digest)).size !== fixtures.length)
    bad('a candidate has several fixture reservations');
  const complete =
    stored.schema_version === 2 ? (stored.fixture_history_complete ?? false) : stored.reservations.length === 0;
  if (complete && fixtures.length > stored.reservations.length)
    bad('the fixture history exceeds the candidate reservations');
  const state = createCampaignFalsePromotionState({
    campaign_id: campaignId,
    policy,
    reservations: stored.reservations,
    fixture_reservations: fixtures,
    fixture_history_complete: complete,
  });
  return {state, policy, complete};
}

const legacyRefusal = (campaignId: string): never =>
  fail(
    'CAMPAIGN_LEGACY',
    `campaign ${JSON.stringify(campaignId)} has a schema-1 ledger with reservations and no fixture ` +
      `history; start a new campaign id`,
  );

/**
 * Reserve alpha for the candidate before anything about it is observed (or
 * find its reservation again); returns the campaign-adjusted policy. Call
 * under the scenario lock.
 */
export function reserveCandidate(
  store: ScenarioStore,
  campaignId: string,
  requested: CampaignFalsePromotionPolicy | undefined,
  candidate: ContextBundle,
  base: ConfirmationPolicy,
): {policy: ConfirmationPolicy; reservation: CandidateRiskReservation; campaign: CampaignFalsePromotionPolicy} {
  const {state, policy, complete} = loadCampaign(store, campaignId, requested);
  const existing = state.reservations.find((r) => r.candidate_digest === candidate.digest);
  if (existing) {
    if (existing.incumbent_digest !== candidate.parent_digest || existing.evaluator_epoch !== candidate.evaluator_epoch)
      fail('INTEGRITY', 'the candidate lineage does not match its campaign reservation');
    const effective = {...base, confidence_z: Math.max(base.confidence_z, existing.required_confidence_z)};
    if (confirmationPolicyDigest(effective) !== existing.confirmation_policy_digest)
      fail('POLICY_MISMATCH', 'the candidate was reserved with another confirmation policy; the policy cannot change');
    return {policy: effective, reservation: existing, campaign: policy};
  }
  if (!complete) legacyRefusal(campaignId);
  const {reservation, confirmation_policy} = createCandidateRiskReservation({
    campaign_id: campaignId,
    candidate,
    candidate_index: state.reservations.length,
    policy,
    base_policy: base,
  });
  writeCampaign(
    store,
    createCampaignFalsePromotionState({...state, reservations: [...state.reservations, reservation]}),
  );
  return {policy: confirmation_policy, reservation, campaign: policy};
}

/**
 * Reserve the candidate's fixture plan: enough distinct fixtures per lane,
 * lanes disjoint, and no fixture that an earlier candidate of the campaign
 * reserved. The same plan again is a no-op; a changed plan is refused. Call
 * under the scenario lock.
 */
export function reserveFixturePlan(
  store: ScenarioStore,
  campaignId: string,
  candidate: ContextBundle,
  cohort: string,
  units: readonly PlanUnit[],
  confirmation: ConfirmationPolicy,
): CandidateFixtureReservation {
  const {state, policy, complete} = loadCampaign(store, campaignId, undefined);
  if (!complete) legacyRefusal(campaignId);
  const proposed = createCandidateFixtureReservation({
    campaign_id: campaignId,
    candidate_digest: candidate.digest,
    evaluator_epoch: candidate.evaluator_epoch,
    cohort,
    units: units.map((u) => ({lane: u.lane, fixture_digest: u.fixture_digest, seed: u.seed})),
  });
  const lanes = {screen: new Set<string>(), confirmation: new Set<string>(), heldout: new Set<string>()};
  for (const u of units) lanes[u.lane].add(u.fixture_digest);
  if (lanes.screen.size < confirmation.min_screen_pairs)
    fail('PLAN_UNREACHABLE', 'the fixture plan has too few independent screen fixtures');
  if (
    lanes.confirmation.size < Math.max(confirmation.min_confirmation_pairs, policy.min_independent_confirmation_blocks)
  )
    fail('PLAN_UNREACHABLE', 'the fixture plan has too few independent confirmation fixtures');
  if (lanes.heldout.size < confirmation.min_heldout_pairs)
    fail('PLAN_UNREACHABLE', 'the fixture plan has too few independent held-out fixtures');
  const overlap =
    [...lanes.screen].some((d) => lanes.confirmation.has(d) || lanes.heldout.has(d)) ||
    [...lanes.confirmation].some((d) => lanes.heldout.has(d));
  if (policy.require_disjoint_lane_blocks && overlap)
    fail('PLAN_UNREACHABLE', 'the fixture plan reuses fixtures across evaluation lanes');
  const existing = state.fixture_reservations.find((f) => f.candidate_digest === candidate.digest);
  if (existing) {
    if (existing.plan_digest !== proposed.plan_digest)
      fail('PLAN_CHANGED', 'the candidate fixture plan changed after its durable reservation');
    return existing;
  }
  const taken = new Map<string, string>();
  for (const f of state.fixture_reservations) for (const u of f.units) taken.set(u.fixture_digest, f.candidate_digest);
  const reused = [
    ...new Set(proposed.units.map((u) => taken.get(u.fixture_digest)).filter((x): x is string => x !== undefined)),
  ].sort();
  if (reused.length)
    fail(
      'CAMPAIGN_FIXTURE_REUSE',
      `the campaign fixture plan reuses fixtures reserved by earlier candidates: ${reused.join(', ')}; use ` +
        `fresh fixtures for every candidate of a campaign`,
    );
  writeCampaign(
    store,
    createCampaignFalsePromotionState({...state, fixture_reservations: [...state.fixture_reservations, proposed]}),
  );
  return proposed;
}

/** Record a terminal decision without promotion (rejected or inconclusive); idempotent. Under the lock. */
export function recordCampaignTerminal(
  store: ScenarioStore,
  campaignId: string,
  digest: string,
  status: 'rejected' | 'inconclusive',
  reason: string,
): void {
  const {state} = loadCampaign(store, campaignId, undefined);
  const i = state.reservations.findIndex((r) => r.candidate_digest === digest);
  if (i < 0) fail('INTEGRITY', `candidate ${digest} has no reservation in campaign ${JSON.stringify(campaignId)}`);
  const r = state.reservations[i]!;
  if (r.status !== 'reserved') {
    if (r.status === status && r.reason === reason) return;
    if (r.status === 'rejected' || r.status === 'inconclusive' || r.status === 'blocked') return;
    fail('INTEGRITY', 'a terminal campaign reservation cannot change status');
  }
  const reservations = [...state.reservations];
  reservations[i] = {...r, status, reason};
  writeCampaign(store, createCampaignFalsePromotionState({...state, reservations}));
}

/** Store an authorization or block and its immutable artifact. Under the lock. */
export function recordCampaignDecision(
  store: ScenarioStore,
  campaignId: string,
  updated: CandidateRiskReservation,
): {path: string; digest: string} {
  const {state} = loadCampaign(store, campaignId, undefined);
  const i = state.reservations.findIndex((r) => r.candidate_digest === updated.candidate_digest);
  const reservations = [...state.reservations];
  if (!jsonEqual(reservations[i], updated)) {
    reservations[i] = updated;
    writeCampaign(store, createCampaignFalsePromotionState({...state, reservations}));
  }
  const fixture = state.fixture_reservations.find((f) => f.candidate_digest === updated.candidate_digest)!;
  const body = {schema_version: 1, campaign_id: campaignId, risk_reservation: updated, fixture_reservation: fixture};
  const digest = reservationArtifactDigest(body);
  writeReservationArtifact(store, campaignId, updated.candidate_digest, {...body, artifact_digest: digest});
  return {path: store.guard.relative(store.paths.reservationArtifact(campaignId, updated.candidate_digest)), digest};
}

export interface CampaignShowResult {
  status: 'ok';
  scenario: string;
  campaign_id: string;
  policy: CampaignFalsePromotionPolicy;
  alpha_allocated: number;
  alpha_left: number;
  fixture_history_complete: boolean;
  candidates: Array<{
    candidate_index: number;
    candidate_digest: string;
    allocated_alpha: number;
    required_confidence_z: number;
    status: string;
    reason: string | null;
    fixtures_reserved: number;
  }>;
}

/** The policy, each candidate's allocated alpha and status, and the alpha left. */
export function showCampaign(options: StoreOptions & {campaign: string}): CampaignShowResult {
  const store = openScenario(options);
  if (!readCampaign(store, options.campaign))
    fail('CAMPAIGN_NOT_FOUND', `no campaign ${JSON.stringify(options.campaign)} in scenario "${store.scenario}"`);
  const {state, policy, complete} = loadCampaign(store, options.campaign, undefined);
  const allocated = state.reservations.reduce((s, r) => s + r.allocated_alpha, 0);
  return {
    status: 'ok',
    scenario: store.scenario,
    campaign_id: options.campaign,
    policy,
    alpha_allocated: allocated,
    alpha_left: Math.max(0, policy.familywise_alpha - allocated),
    fixture_history_complete: complete,
    candidates: state.reservations.map((r) => ({
      candidate_index: r.candidate_index,
      candidate_digest: r.candidate_digest,
      allocated_alpha: r.allocated_alpha,
      required_confidence_z: r.required_confidence_z,
      status: r.status,
      reason: r.reason,
      fixtures_reserved:
        state.fixture_reservations.find((f) => f.candidate_digest === r.candidate_digest)?.units.length ?? 0,
    })),
  };
}
