import type {ActivePointer} from '../../../model/promotion/records.js';
import type {CandidateRecord} from '../../../model/promotion/records.js';
import type {Findings} from '../../findings.js';
import {listExecutionKeys} from '../rollback/rollback-execution.js';
import {listPromotionIds, listRollbackIds, readPromotion} from './history.js';
import {FOREIGN_HEAD, RECORD_PROOF} from '../../../model/promotion/pointer-history.js';
import {readBundleTexts} from '../bundle/bundle.js';
import {verifyMirrors} from './mirrors.js';
import {readActive} from './active-pointer.js';
import type {ScenarioCheck} from '../common/kind-steps.js';
import {moveFile, pointerHistory} from './pointer-moves.js';
import {pointerDivergences} from './divergence.js';

/**
 * verify: the pointer names a verified manifest of its epoch, its rollback
 * target exists, its promotion (if any) promoted exactly this bundle; the
 * lifecycles and mirrors agree with it (a lag is a repairable warning).
 */
export function verifyActive(c: Findings, records: Map<string, CandidateRecord>): ActivePointer | undefined {
  const {store} = c;
  const file = store.paths.active;
  const active = c.attempt(file, () => readActive(store));
  if (active === null) {
    // An init interrupted before its pointer: one parentless bundle, no history. The same init completes it.
    const interruptedInit =
      c.bundles.size <= 1 &&
      [...c.bundles.values()].every((b) => b.parent_digest === null) &&
      listPromotionIds(store).length === 0 &&
      listRollbackIds(store).length === 0 &&
      listExecutionKeys(store).length === 0;
    if (interruptedInit)
      c.warn(
        file,
        'INIT_INCOMPLETE',
        `${c.rel(file)} is missing: an interrupted init (running the same init again completes it)`,
      );
    else c.error(file, 'MISSING_POINTER', `${c.rel(file)} is missing: the scenario serves no bundle`);
    return undefined;
  }
  if (!active) return undefined;
  const bundle = c.bundle(active.bundle_digest);
  if (!bundle)
    c.error(
      file,
      'MISSING_BUNDLE',
      `${c.rel(file)} points at ${active.bundle_digest}, whose manifest ` +
        `${c.rel(store.paths.bundle(active.bundle_digest))} is missing or invalid`,
    );
  else if (bundle.evaluator_epoch !== active.evaluator_epoch)
    c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: evaluator_epoch differs from the active manifest's`);
  if (active.rollback_target_digest && !c.bundle(active.rollback_target_digest))
    c.error(
      file,
      'MISSING_BUNDLE',
      `${c.rel(file)}: rollback target ${active.rollback_target_digest} has no valid manifest ` +
        `(${c.rel(store.paths.bundle(active.rollback_target_digest))})`,
    );
  if (active.promotion_id !== null) {
    const promo = c.attempt(file, () => readPromotion(store, active.promotion_id!));
    if (promo === null)
      c.error(file, 'MISSING_PROMOTION', `${c.rel(file)} names promotion ${active.promotion_id}, which does not exist`);
    if (promo) {
      if (promo.candidate_digest !== active.bundle_digest)
        c.error(
          file,
          'LINEAGE_MISMATCH',
          `${c.rel(file)}: promotion ${promo.promotion_id} promoted ${promo.candidate_digest}, not the active bundle`,
        );
      if (promo.rollback_target_digest !== active.rollback_target_digest)
        c.error(
          file,
          'LINEAGE_MISMATCH',
          `${c.rel(file)}: rollback target differs from promotion ${promo.promotion_id}`,
        );
      if (active.manifest_diff_digest !== undefined && active.manifest_diff_digest !== promo.manifest_diff_digest)
        c.error(
          file,
          'DIGEST_MISMATCH',
          `${c.rel(file)}: manifest_diff_digest differs from promotion ${promo.promotion_id}`,
        );
    }
  }
  // Lifecycles and mirrors that lag the pointer are repairable only behind a pointer its history vouches for.
  const diverged = verifyPointerHistory(c, active, records);
  if (!diverged) return active;
  for (const [digest, r] of records) {
    const recordFile = store.paths.record(digest);
    // A divergence is no interrupted command: nothing completes it (DIVERGED says so).
    if (diverged.has(digest)) continue;
    if (digest === active.bundle_digest && r.lifecycle !== 'active')
      c.warn(
        recordFile,
        'LIFECYCLE_PENDING',
        `${c.rel(recordFile)}: the active bundle's record says "${r.lifecycle}" (a pointer move whose ` +
          `lifecycle update was interrupted; the next promote, rollback or repair completes it)`,
      );
    if (digest !== active.bundle_digest && r.lifecycle === 'active')
      c.warn(
        recordFile,
        'LIFECYCLE_PENDING',
        `${c.rel(recordFile)}: says "active" but the pointer names ${active.bundle_digest}`,
      );
  }
  // The texts of manifests this verify has already re-hashed: read again for their texts only, not hashed twice.
  const texts = (digest: string) => readBundleTexts(store, digest);
  const served = bundle ? texts(active.bundle_digest) : null;
  if (served) verifyMirrors(c, served, texts);
  return active;
}

/**
 * verify: active.json is the pointer the newest recorded move wrote, every
 * earlier move is on record back to init, each rollback restored what served
 * before; moves that never served are marked; a lifecycle that says a bundle
 * served agrees with the history; a state only a merge of two clones' histories
 * writes is DIVERGED. Returns the bundles found diverged, or null when the
 * history does not hold.
 */
function verifyPointerHistory(
  c: Findings,
  active: ActivePointer,
  records: Map<string, CandidateRecord>,
): Set<string> | null {
  const {store} = c;
  const file = store.paths.active;
  const h = pointerHistory(store, active, records, (f, fn) => c.attempt(f, fn));
  for (const p of h.problems) {
    if (p.move && !p.move.foreign) c.both(moveFile(store, p.move), file, p.code, p.message);
    else c.error(file, p.code, p.message);
  }
  // Moves that never served, or wait, are named only against a history that holds.
  if (h.problems.length > 0) return null;
  const divergences = pointerDivergences(store, active, h, records);
  for (const d of divergences) c.both(d.files[0], d.files[1], 'DIVERGED', d.message);
  const named = new Set(divergences.flatMap((d) => d.files));
  const head = h.chain[h.chain.length - 1];
  for (const m of h.chain) {
    if (!m.foreign || m.id === FOREIGN_HEAD) continue;
    const proof = moveFile(store, m);
    if (m.id.startsWith(RECORD_PROOF))
      c.note(
        proof,
        'FOREIGN_POINTER_MOVE',
        `${c.rel(proof)} shows ` +
          (m.kind === 'rollback'
            ? `a rollback by another implementation (from ${m.from} back to ${m.to})`
            : `an epoch rollover by another implementation (to ${m.to}, epoch "${m.to_epoch}")`) +
          `, which keeps no record of it and which a later move went on from; accepted because the records ` +
          `it wrote prove the move`,
      );
    else
      c.note(
        proof,
        'FOREIGN_POINTER_MOVE',
        `${c.rel(proof)} keeps the pointer another implementation's ${m.kind} wrote, which autoctx moved ` +
          `on from; accepted because its own fields prove the move`,
      );
  }
  if (head?.foreign && head.id === FOREIGN_HEAD)
    c.note(
      file,
      'FOREIGN_POINTER_MOVE',
      `${c.rel(file)} was written by another implementation's ${head.kind}, which keeps no record of it; ` +
        `accepted because its own fields prove the move`,
    );
  for (const m of h.pending)
    c.warn(
      moveFile(store, m),
      'MOVE_PENDING',
      `${c.rel(moveFile(store, m))}: a ${m.kind} away from the serving bundle was recorded but the pointer ` +
        `did not move (an interrupted command; running it again completes it)`,
    );
  for (const m of h.unserved) {
    if (named.has(moveFile(store, m))) continue; // part of a divergence, named there
    c.warn(
      moveFile(store, m),
      'NEVER_SERVED',
      `${c.rel(moveFile(store, m))}: this ${m.kind} never served (it was recorded, then another move went ahead of it)`,
    );
  }
  const served = new Set(h.chain.map((m) => m.to));
  for (const [digest, r] of records) {
    const recordFile = store.paths.record(digest);
    if (r.lifecycle === 'superseded' && !served.has(digest))
      c.error(
        recordFile,
        'LIFECYCLE_MISMATCH',
        `${c.rel(recordFile)} says "superseded", but no recorded pointer move ever made ${digest} active`,
      );
  }
  return new Set(divergences.map((d) => d.digest));
}

export const activeCheck: ScenarioCheck = {
  order: 300,
  scenario(c, view) {
    verifyActive(c, view.records);
  },
};
