import {prepareSigning, signingInputs} from '../signing/signing.js';
import {requireSignedSeal} from '../signing/trust-gates.js';
import {randomBytes} from 'node:crypto';
import {jsonEqual, stableDigest} from '../../canonical/index.js';
import {AutoctxError, fail} from '../../errors.js';
import {runAudit} from '../../evaluator/audit.js';
import type {ContextBundle} from '../../model/bundle/bundle.js';
import {createCausalAttribution} from '../../model/evaluation/causal-attribution.js';
import {evaluateMatchedTrials} from '../../model/evaluation/comparison.js';
import {manifestDiff} from '../../model/bundle/diff.js';
import {matchedEvidenceDigest} from '../../model/evaluation/evidence-digests.js';
import {confirmationPolicyDigest} from '../../model/evaluation/policy.js';
import {
  isoTimestamp,
  type ActivePointer,
  type CandidateRecord,
  type PromotionRecord,
} from '../../model/promotion/records.js';
import {compareReplay} from '../../model/evaluation/replay.js';
import {checkServeable} from '../../model/bundle/serveability.js';
import {authorizeCampaignPromotion} from '../../model/evaluation/campaign.js';
import type {ConfirmationPolicy} from '../../model/evaluation/policy.js';
import {sortEvidence, type MatchedTrial} from '../../model/evaluation/trial.js';
import {loadCampaign, recordCampaignDecision} from '../evaluation/campaign.js';
import type {ScenarioStore} from '../../store/index.js';
import {evaluatorTimeout, lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {finishPointerMove, movePointer, prepareMove, requireRecordedPointer} from './pointer-move.js';
import {promotionMove} from '../../model/promotion/pointer-history.js';
import {planCampaign} from '../../store/kinds/evaluation/campaign-ledger.js';
import {pausePoint} from '../../store/index.js';
import {rejectWithNegativeResult} from './rejection.js';
import {activePlaces, checkScopeRegistries, endStaleCanaries} from '../release/serving.js';
import {checkActor, commandActor} from '../common/actor.js';
import {resolveDigest} from '../common/resolve.js';
import {evidenceProblem, readEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {activeDigest, readActive, requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {
  readCausalAttribution,
  readStaleTerminalization,
  writeCausalAttribution,
  writeStaleTerminalization,
} from '../../store/kinds/promotion/terminal-markers.js';
import {readNegativeResult} from '../../store/kinds/promotion/negative-result.js';
import {readManifestDiff, writeManifestDiff} from '../../store/kinds/bundle/manifest-diff.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {writeMirrors} from '../../store/kinds/promotion/mirrors.js';
import {listPromotionIds, readPromotion, writePromotion} from '../../store/kinds/promotion/history.js';

export interface PromoteOptions extends StoreOptions {
  candidate: string;
  rationale?: string | undefined;
  /** Who promotes (recorded on what the promotion ends); in a signed tree the key must sign as it. */
  actor?: string | undefined;
  audit?: string | undefined;
  timeoutSeconds?: number | undefined;
}

export interface PromoteResult {
  status: 'promoted' | 'rejected';
  reason: string | null;
  scenario: string;
  bundle_digest: string;
  incumbent_digest: string;
  promotion_id: string | null;
  already_promoted: boolean;
  causal_attribution: boolean;
}

/** The active bundle is no longer the candidate's parent: record why, reject, exit 6. */
async function terminateStale(
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
async function campaignGate(
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
    blocked = `false-promotion gate blocked: ${gate.reason}; reservation_sha256=${stableDigest(gate.reservation)}; evidence_sha256=${gate.reservation.evidence_digest}`;
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

const negativeProblem = (digest: string) =>
  `candidate ${digest} has a negative_result.json: it was rejected, whatever its record says; nothing was promoted (run autoctx verify)`;
const changedProblem = (store: ScenarioStore, digest: string, now_: CandidateRecord | null) =>
  `candidate ${digest} changed while promote checked it (it is now ${now_?.lifecycle ?? 'gone'}${readNegativeResult(store, digest) ? ', with a negative result' : ''}); nothing was promoted`;

/**
 * Under the lock, what a negative result beside a confirmed record means: a
 * rejection that went on while promote read (the record is no longer what it
 * read: CAS_LOST, exit 6), or a rejection cut short between its negative
 * result and its record (INTEGRITY, exit 8: verify names it, repair completes
 * it). A rejection writes both under the lock, so only there is the pair read
 * whole; outside it a rejection half done looks like the second.
 */
function refuseRejected(store: ScenarioStore, digest: string, record: CandidateRecord): never {
  const now_ = readRecord(store, digest);
  if (!now_ || now_.lifecycle !== 'confirmed' || !jsonEqual(now_.comparison, record.comparison))
    fail('CAS_LOST', changedProblem(store, digest, now_));
  fail('INTEGRITY', negativeProblem(digest));
}

/**
 * Every check that needs no lock: the record, the evidence, the replay, serveability, the diff. The negative result is
 * the caller's (read under the lock).
 */
function checkGates(store: ScenarioStore, candidate: ContextBundle, parent: ContextBundle, record: CandidateRecord) {
  if (!record.comparison || record.comparison.decision !== 'confirmed')
    fail('NOT_CONFIRMED', `candidate ${candidate.digest} has no confirmed comparison`);
  const evidence = readEvidence(store, candidate.digest);
  if (!evidence || evidence.legacy || !evidence.confirmation_policy)
    fail('INTEGRITY', `candidate ${candidate.digest} has no schema-2 matched evidence to replay`);
  if (record.confirmation_policy_digest !== evidence.confirmation_policy_digest)
    fail('INTEGRITY', 'the record and the evidence envelope were decided under different policies');
  const plan = readPlan(store, candidate.digest);
  const problem = evidenceProblem(store, candidate, evidence, plan, record);
  if (problem) fail('INTEGRITY', `${problem}; nothing was promoted (run autoctx verify)`);
  const cohorts = new Set(evidence.trials.map((t) => t.cohort));
  if (cohorts.size !== 1) fail('INTEGRITY', `promotion evidence must use exactly one cohort, found ${cohorts.size}`);
  const replayed = evaluateMatchedTrials(candidate, evidence.trials, evidence.confirmation_policy);
  const verdict = compareReplay(record.comparison, replayed);
  if (!verdict.matches || replayed.decision !== 'confirmed')
    fail(
      'REPLAY_MISMATCH',
      `the recorded comparison does not reproduce from the persisted evidence (largest distance ${verdict.max_ulp} ULP); nothing was promoted`,
    );
  try {
    checkServeable(candidate, parent);
  } catch (error) {
    if (error instanceof AutoctxError)
      throw new AutoctxError(error.code, `${error.message}; the candidate stays confirmed`);
    throw error;
  }
  const diff = manifestDiff(candidate, parent);
  const stored = readManifestDiff(store, candidate.digest);
  if (stored && !jsonEqual(stored, diff))
    fail('INTEGRITY', 'manifest_diff.json does not equal the diff recomputed from the manifests');
  return {evidence, diff, storedDiff: stored !== null, cohort: [...cohorts][0]!};
}

/**
 * Every promotion gate, then the compare-and-swap of active.json: a
 * confirmed record whose comparison replays from the persisted evidence,
 * serveability, the recomputed manifest diff, one cohort, the bound
 * pre_promotion audit; under the lock the parent must still be active, the
 * promotion record is written, then the pointer, then mirrors and lifecycles.
 */
export async function promote(options: PromoteOptions): Promise<PromoteResult> {
  const auditTimeout = evaluatorTimeout(options.timeoutSeconds);
  lockTimeout(options);
  const given = options.actor !== undefined ? checkActor(options.actor) : undefined;
  const inputs = signingInputs(options);
  const store = openScenario(options);
  const digest = resolveDigest(store, options.candidate);
  const candidate = requireBundle(store, digest);
  // In a signed tree (or with an anchor): the trust is checked, the key is ready (signing as --actor when given), and
  // the candidate's trial seal must carry a valid signature.
  const signing = prepareSigning(store, options, {actor: given ?? null, role: 'sign'}, inputs);
  if (signing.trust) requireSignedSeal(store, signing.trust, digest);
  const record = readRecord(store, digest);
  if (!record) fail('NOT_CONFIRMED', `bundle ${digest} is not a candidate`);
  pausePoint('promote:record-read');
  const active = requireActive(store);
  // Already promoted (a re-run after a crash): finish what is left and report it.
  if (active.bundle_digest === digest && active.promotion_id !== null) {
    await store.withLock(lockTimeout(options), () => {
      // A crash after the pointer left the mirrors and lifecycles behind it: the re-run brings them in line.
      writeMirrors(store, candidate);
      finishPointerMove(store, requireActive(store), now(options));
    });
    const p = readPromotion(store, active.promotion_id)!;
    return {
      status: 'promoted',
      reason: null,
      scenario: store.scenario,
      bundle_digest: digest,
      incumbent_digest: p.incumbent_digest,
      promotion_id: p.promotion_id,
      already_promoted: true,
      causal_attribution: readCausalAttribution(store, digest) !== null,
    };
  }
  if (record.lifecycle !== 'confirmed')
    fail('NOT_CONFIRMED', `candidate ${digest} is ${record.lifecycle}, not confirmed; nothing was promoted`);
  if (candidate.parent_digest === null) fail('NOT_CONFIRMED', `bundle ${digest} has no parent`);
  if (readStaleTerminalization(store, digest) || active.bundle_digest !== candidate.parent_digest)
    await terminateStale(store, options, candidate, record, active.bundle_digest);
  // A negative result seen outside the lock may be a rejection under way: decided under the lock, never from a
  // half-written pair.
  if (readNegativeResult(store, digest))
    await store.withLock(lockTimeout(options), () => refuseRejected(store, digest, record));
  const parent = requireBundle(store, candidate.parent_digest);
  const {evidence, diff, storedDiff, cohort} = checkGates(store, candidate, parent, record);
  const plan = readPlan(store, digest);
  const bound = plan?.additions.audit?.command ?? null;
  if (options.audit !== undefined && options.audit !== bound)
    fail(
      'AUDIT_CHANGED',
      `the audit command differs from the one bound when evaluation started (${JSON.stringify(bound)})`,
    );
  if (bound !== null) {
    const audit = await runAudit(
      bound,
      'pre_promotion',
      {
        scenario: store.scenario,
        candidate_digest: digest,
        comparison: record.comparison,
        confirmation_policy_digest: record.confirmation_policy_digest,
        plan_digest: plan?.plan_digest ?? null,
        manifest_diff_digest: diff.digest,
      },
      auditTimeout,
    );
    if (audit.outcome !== 'advisory')
      fail(
        'AUDIT_HOLD',
        `the pre_promotion audit answered ${audit.outcome}${audit.detail ? ` (${audit.detail})` : ''}; the candidate stays confirmed and nothing changed`,
      );
  }
  // The campaign the plan ran under: autoctx's plans bind it, the Python implementation's ledger reserves the plan.
  const campaignId = plan ? planCampaign(store, plan) : null;
  if (plan && campaignId !== null) {
    const blocked = await campaignGate(
      store,
      options,
      campaignId,
      candidate,
      record,
      evidence.trials,
      evidence.confirmation_policy!,
      plan.plan_digest,
    );
    if (blocked)
      return {
        status: 'rejected',
        reason: blocked,
        scenario: store.scenario,
        bundle_digest: digest,
        incumbent_digest: parent.digest,
        promotion_id: null,
        already_promoted: false,
        causal_attribution: false,
      };
  }
  const causal = createCausalAttribution(candidate, parent, diff, evidence.trials);
  let outcome: PromoteResult | undefined;
  let staleActive: string | undefined;
  pausePoint('promote:before-commit');
  await store.withLock(lockTimeout(options), () => {
    const current = requireActive(store);
    const expected = activeDigest(store);
    // Re-checked under the lock, after the audit: what this promotion decided on must still hold.
    if (current.bundle_digest === digest && current.promotion_id !== null) {
      // Another promote of this candidate went first: report its promotion, reject nothing.
      finishPointerMove(store, current, now(options));
      writeMirrors(store, candidate);
      const p = readPromotion(store, current.promotion_id)!;
      outcome = {
        status: 'promoted',
        reason: null,
        scenario: store.scenario,
        bundle_digest: digest,
        incumbent_digest: p.incumbent_digest,
        promotion_id: p.promotion_id,
        already_promoted: true,
        causal_attribution: readCausalAttribution(store, digest) !== null,
      };
      return;
    }
    const now_ = readRecord(store, digest);
    if (
      !now_ ||
      now_.lifecycle !== 'confirmed' ||
      !jsonEqual(now_.comparison, record.comparison) ||
      readNegativeResult(store, digest)
    )
      refuseRejected(store, digest, record);
    if (current.bundle_digest !== candidate.parent_digest) {
      staleActive = current.bundle_digest;
      return;
    }
    requireRecordedPointer(store, current);
    // A promotion record left by an interrupted run for this same move is reused, never duplicated.
    const existing = listPromotionIds(store)
      .map((id) => readPromotion(store, id)!)
      .find(
        (p) =>
          p.candidate_digest === digest &&
          p.incumbent_digest === parent.digest &&
          p.promoted_at >= current.activated_at,
      );
    // Every scope's registry is read and validated before the first write (the canaries it ends are in them): a refusal
    // leaves nothing.
    checkScopeRegistries(store);
    const at = isoTimestamp(now(options));
    const promotion: PromotionRecord = existing ?? {
      schema_version: 1,
      promotion_id: randomBytes(16).toString('hex'),
      candidate_digest: digest,
      incumbent_digest: parent.digest,
      rollback_target_digest: parent.digest,
      evaluator_epoch: candidate.evaluator_epoch,
      cohort,
      rationale: options.rationale ?? record.comparison!.reason,
      comparison: record.comparison!,
      confirmation_policy: evidence.confirmation_policy!,
      confirmation_policy_digest: confirmationPolicyDigest(evidence.confirmation_policy!),
      manifest_diff_digest: diff.digest,
      promoted_at: at,
    };
    const pointer: ActivePointer = {
      schema_version: 1,
      bundle_digest: digest,
      evaluator_epoch: candidate.evaluator_epoch,
      promotion_id: promotion.promotion_id,
      rollback_target_digest: parent.digest,
      activated_at: promotion.promoted_at,
      rationale: promotion.rationale,
      manifest_diff_digest: diff.digest,
    };
    prepareMove(store, current, promotionMove(promotion), pointer, now(options));
    if (!storedDiff) writeManifestDiff(store, diff);
    if (causal) writeCausalAttribution(store, digest, causal);
    writePromotion(store, promotion);
    // The canaries tested against the bundle this promotion replaces serve on stale evidence once it moves: ended
    // first, each by its receipt.
    endStaleCanaries(store, digest, {
      rationale: `withdrawn: promotion ${promotion.promotion_id} replaces ${parent.digest}, the bundle its canary evidence compares with`,
      at,
      actor: commandActor(store, options.actor),
    });
    movePointer(store, {expected, pointer, bundle: candidate, at: now(options)});
    outcome = {
      status: 'promoted',
      reason: null,
      scenario: store.scenario,
      bundle_digest: digest,
      incumbent_digest: parent.digest,
      promotion_id: promotion.promotion_id,
      already_promoted: false,
      causal_attribution: causal !== null,
    };
  });
  if (staleActive !== undefined) await terminateStale(store, options, candidate, record, staleActive);
  return outcome!;
}

/**
 * What a CANARY needs (spec 003: a canary serves real sessions, so it needs
 * everything ACTIVE needs but the final swap): a confirmed comparison of this
 * bundle against the bundle active.json names now, that replays from the
 * persisted evidence, with serveability, the recomputed diff, one cohort and
 * the bound pre_promotion audit passing. Returns the first blocker, or null.
 * Nothing is written.
 */
export async function canaryEvidence(
  store: ScenarioStore,
  digest: string,
  options: {timeoutSeconds?: number | undefined},
): Promise<{code: string; detail: string} | null> {
  const auditTimeout = evaluatorTimeout(options.timeoutSeconds);
  const candidate = requireBundle(store, digest);
  const record = readRecord(store, digest);
  if (!record || !record.comparison)
    return {
      code: 'EVALUATION_MISSING',
      detail: `bundle ${digest} has no recorded comparison: propose, screen and confirm it against the active bundle first`,
    };
  if (record.lifecycle !== 'confirmed' || record.comparison.decision !== 'confirmed')
    return {
      code: 'EVALUATION_NOT_CONFIRMED',
      detail: `candidate ${digest} is ${record.lifecycle}, its comparison ${record.comparison.decision}: a canary needs a confirmed comparison`,
    };
  const active = requireActive(store);
  if (candidate.parent_digest !== active.bundle_digest) {
    return {
      code: 'EVALUATION_NOT_FOR_BUNDLE_HASH',
      detail: `the confirmed comparison on record compares ${digest} with ${candidate.parent_digest ?? 'nothing'}, not with the bundle active.json names now (${active.bundle_digest})`,
    };
  }
  try {
    if (readNegativeResult(store, digest)) fail('INTEGRITY', negativeProblem(digest));
    const parent = requireBundle(store, candidate.parent_digest);
    const {diff} = checkGates(store, candidate, parent, record);
    const plan = readPlan(store, digest);
    const bound = plan?.additions.audit?.command ?? null;
    if (bound !== null) {
      const audit = await runAudit(
        bound,
        'pre_promotion',
        {
          scenario: store.scenario,
          candidate_digest: digest,
          comparison: record.comparison,
          confirmation_policy_digest: record.confirmation_policy_digest,
          plan_digest: plan?.plan_digest ?? null,
          manifest_diff_digest: diff.digest,
        },
        auditTimeout,
      );
      if (audit.outcome !== 'advisory')
        return {
          code: 'AUDIT_HOLD',
          detail: `the pre_promotion audit answered ${audit.outcome}${audit.detail ? ` (${audit.detail})` : ''}`,
        };
    }
  } catch (error) {
    if (error instanceof AutoctxError && ![1, 7, 9].includes(error.exitCode))
      return {code: error.code, detail: error.message};
    throw error;
  }
  return null;
}
