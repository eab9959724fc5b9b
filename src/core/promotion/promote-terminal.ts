import {stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import type {ContextBundle} from '../../model/bundle/bundle.js';
import {matchedEvidenceDigest} from '../../model/evaluation/evidence-digests.js';
import {isoTimestamp, type CandidateRecord} from '../../model/promotion/records.js';
import {authorizeCampaignPromotion} from '../../model/evaluation/campaign.js';
import type {ConfirmationPolicy} from '../../model/evaluation/policy.js';
import {sortEvidence, type MatchedTrial} from '../../model/evaluation/trial.js';
import {loadCampaign, recordCampaignDecision} from '../evaluation/campaign.js';
import type {ScenarioStore} from '../../store/index.js';
import {lockTimeout, now} from '../common/store-options.js';
import {rejectWithNegativeResult} from './rejection.js';
import {activePlaces, checkScopeRegistries} from '../release/serving.js';
import {commandActor} from '../common/actor.js';
import {readEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {readActive} from '../../store/kinds/promotion/active-pointer.js';
import {writeStaleTerminalization} from '../../store/kinds/promotion/terminal-markers.js';
import type {PromoteOptions} from './promote-options.js';

/** The rejections promote decides itself, each terminal: a stale incumbent, and a blocked campaign gate. */

/** The active bundle is no longer the candidate's parent: record why, reject, exit 6. */
export async function terminateStale(
  store: ScenarioStore,
  options: PromoteOptions,
  candidate: ContextBundle,
  record: CandidateRecord,
  activeDigest: string,
): Promise<never> {
  const reason = `confirmed candidate incumbent ${candidate.parent_digest} is stale; active bundle is ${activeDigest}`;
  const evidence = readEvidence(store, candidate.digest);
  const plan = readPlan(store, candidate.digest);
  const evidenceDigest =
    evidence && evidence.confirmation_policy
      ? matchedEvidenceDigest({
          trials: sortEvidence(evidence.trials),
          confirmation_policy: evidence.confirmation_policy,
          confirmation_policy_digest: evidence.confirmation_policy_digest,
        })
      : null;
  let served = false;
  let servesElsewhere: string[] = [];
  await store.withLock(lockTimeout(options), () => {
    // Re-checked under the lock: a candidate that serves (another promote of it won) or is already rejected is left as
    // it is.
    const current = readRecord(store, candidate.digest);
    const active = readActive(store);
    if (!current || current.lifecycle !== 'confirmed' || active?.bundle_digest === candidate.digest) {
      served = active?.bundle_digest === candidate.digest;
      return;
    }
    // A rejected bundle never serves: one that is a scope's ACTIVE is not rejected here (only a rollback ends an
    // ACTIVE).
    servesElsewhere = activePlaces(store, candidate.digest);
    if (servesElsewhere.length > 0) return;
    record = current;
    // What the rejection will end is read whole before its first write: a registry edited by hand refuses it with
    // nothing written.
    checkScopeRegistries(store);
    const at = isoTimestamp(now(options));
    writeStaleTerminalization(store, candidate.digest, {
      schema_version: 1,
      candidate_digest: candidate.digest,
      parent_digest: candidate.parent_digest,
      observed_active_digest: activeDigest,
      evaluator_plan_digest: plan?.plan_digest ?? null,
      matched_evidence_digest: evidenceDigest,
      reason,
    });
    rejectWithNegativeResult(
      store,
      candidate,
      record,
      {kind: 'stale-incumbent', reason, at, actor: commandActor(store, options.actor)},
      'terminal',
    );
  });
  if (served)
    fail(
      'ACTIVE_MOVED',
      `candidate ${candidate.digest} was promoted by another command meanwhile; nothing more was done`,
      {active: candidate.digest},
    );
  if (servesElsewhere.length > 0)
    fail(
      'ACTIVE_MOVED',
      `${reason}; the candidate is not rejected, since it serves (${servesElsewhere.join('; ')}); nothing was changed`,
      {active: activeDigest},
    );
  fail('ACTIVE_MOVED', `${reason}; the candidate is rejected as stale (propose it again against the active bundle)`, {
    active: activeDigest,
  });
}

/**
 * The campaign's authorization: the evidence must match the reservation and the
 * reserved plan, and the dependence-aware gate must clear. A block is terminal
 * (negative result, rejected); returns its reason, or null when authorized.
 */
export async function campaignGate(
  store: ScenarioStore,
  options: PromoteOptions,
  campaignId: string,
  candidate: ContextBundle,
  record: CandidateRecord,
  trials: MatchedTrial[],
  policy: ConfirmationPolicy,
  planDigest: string,
): Promise<string | null> {
  const {state, policy: campaignPolicy} = loadCampaign(store, campaignId, undefined);
  const reservation = state.reservations.find((r) => r.candidate_digest === candidate.digest);
  const fixtures = state.fixture_reservations.find((f) => f.candidate_digest === candidate.digest);
  if (!reservation || !fixtures)
    fail(
      'INTEGRITY',
      `candidate ${candidate.digest} has no durable reservation in campaign ${JSON.stringify(campaignId)}`,
    );
  const gate = authorizeCampaignPromotion({
    candidate,
    comparison: record.comparison!,
    trials,
    confirmation_policy: policy,
    campaign_policy: campaignPolicy,
    reservation,
    fixture_reservation: fixtures,
  });
  let blocked: string | null = null;
  await store.withLock(lockTimeout(options), () => {
    checkScopeRegistries(store);
    const artifact = recordCampaignDecision(store, campaignId, gate.reservation);
    if (gate.authorized) return;
    const at = isoTimestamp(now(options));
    blocked =
      `false-promotion gate blocked: ${gate.reason}; reservation_sha256=${stableDigest(gate.reservation)}; ` +
      `evidence_sha256=${gate.reservation.evidence_digest}`;
    rejectWithNegativeResult(
      store,
      candidate,
      record,
      {
        kind: 'false-promotion-blocked',
        reason: gate.reason,
        rationale: blocked,
        at,
        reservationArtifact: {...artifact, reservation: gate.reservation},
        actor: commandActor(store, options.actor),
      },
      'terminal',
    );
  });
  return blocked;
}
