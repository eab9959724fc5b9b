import {prepareSigning, signingInputs} from '../signing/signing.js';
import {requireSignedSeal} from '../signing/trust-gates.js';
import {randomBytes} from 'node:crypto';
import {jsonEqual} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {runAudit} from '../../evaluator/audit.js';
import {createCausalAttribution} from '../../model/evaluation/causal-attribution.js';
import {confirmationPolicyDigest} from '../../model/evaluation/policy.js';
import {isoTimestamp, type ActivePointer, type PromotionRecord} from '../../model/promotion/records.js';
import {evaluatorTimeout, lockTimeout, now, openScenario} from '../common/store-options.js';
import {
  finishPointerMove,
  movePointer,
  prepareMove,
  requireRecordedPointer,
  requireUndiverged,
} from './pointer-move.js';
import {promotionMove} from '../../model/promotion/pointer-history.js';
import {planCampaign} from '../../store/kinds/evaluation/campaign-ledger.js';
import {pausePoint} from '../../store/index.js';
import {checkScopeRegistries, endStaleCanaries} from '../release/serving.js';
import {checkActor, commandActor} from '../common/actor.js';
import {resolveDigest} from '../common/resolve.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {activeDigest, requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {
  readCausalAttribution,
  readStaleTerminalization,
  writeCausalAttribution,
} from '../../store/kinds/promotion/terminal-markers.js';
import {readNegativeResult} from '../../store/kinds/promotion/negative-result.js';
import {writeManifestDiff} from '../../store/kinds/bundle/manifest-diff.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {writeMirrors} from '../../store/kinds/promotion/mirrors.js';
import {listPromotionIds, readPromotion, writePromotion} from '../../store/kinds/promotion/history.js';
import type {PromoteOptions, PromoteResult} from './promote-options.js';
import {campaignGate, terminateStale} from './promote-terminal.js';
import {checkGates, refuseRejected} from './promote-checks.js';
import {computeGuardrails, requireGuardrails} from './guardrail-gate.js';
import {readTrialObservations} from '../../store/kinds/evaluation/trial-observations.js';
import {writePromotionGuardrails} from '../../store/kinds/promotion/promotion-guardrails.js';

export type {PromoteOptions, PromoteResult} from './promote-options.js';
export {canaryEvidence} from './promote-canary.js';

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
      requireUndiverged(store);
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
  // The plan's guardrails, over the pairs the decision used: any that fails or is unmeasured refuses, before the audit.
  const guardrails = computeGuardrails(
    digest,
    parent.digest,
    plan,
    evidence.trials,
    readTrialObservations(store, digest),
  );
  requireGuardrails(guardrails);
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
        `the pre_promotion audit answered ${audit.outcome}${audit.detail ? ` (${audit.detail})` : ''}; the ` +
          `candidate stays confirmed and nothing changed`,
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
      requireUndiverged(store);
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
    if (guardrails) writePromotionGuardrails(store, guardrails);
    writePromotion(store, promotion);
    // The canaries tested against the bundle this promotion replaces serve on stale evidence once it moves: ended
    // first, each by its receipt.
    endStaleCanaries(store, digest, {
      rationale:
        `withdrawn: promotion ${promotion.promotion_id} replaces ${parent.digest}, the bundle its canary ` +
        `evidence compares with`,
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
      ...(guardrails ? {guardrails: guardrails.guardrails} : {}),
    };
  });
  if (staleActive !== undefined) await terminateStale(store, options, candidate, record, staleActive);
  return outcome!;
}
