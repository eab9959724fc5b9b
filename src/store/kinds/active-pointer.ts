import {fail} from '../../errors.js';
import type {ActivePointer} from '../../model/records.js';
import {compareAndSwap, documentDigest} from '../cas.js';
import {readDocument} from '../documents.js';
import type {KindContext} from './context.js';
import type {CandidateRecord} from '../../model/records.js';
import type {Findings} from '../findings.js';
import {listPromotionIds, listRollbackIds, readPromotion} from './history.js';
import {readBundleTexts} from './bundle.js';
import {verifyMirrors} from './mirrors.js';

/** context_bundles/active.json: the serving pointer, moved only by compare-and-swap. */
export const ACTIVE_SCHEMA = 'active' as const;

export function activePath(ctx: KindContext): string {
  return ctx.paths.active;
}

export function readActive(ctx: KindContext): ActivePointer | null {
  return readDocument<ActivePointer>(ctx.guard, ctx.paths.active, ACTIVE_SCHEMA);
}

/** The digest a pointer move compares against (null: no pointer yet). */
export function activeDigest(ctx: KindContext): string | null {
  return documentDigest(ctx.writer, ctx.paths.active);
}

/**
 * Move the pointer by compare-and-swap: only if active.json still has the
 * digest `expected` (null: none yet). A pointer that moved is ACTIVE_MOVED
 * (exit 6) and nothing is written.
 */
export function swapActive(ctx: KindContext, expected: string | null, next: ActivePointer): void {
  compareAndSwap(ctx.writer, ctx.paths.active, ACTIVE_SCHEMA, expected, next, (found) =>
    fail('ACTIVE_MOVED', `active.json moved while this command decided (expected ${expected ?? 'none'}, found ${found ?? 'none'}); nothing was written`, {file: ctx.guard.relative(ctx.paths.active)}),
  );
}

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
    const interruptedInit = c.bundles.size <= 1 && [...c.bundles.values()].every((b) => b.parent_digest === null) && listPromotionIds(store).length === 0 && listRollbackIds(store).length === 0;
    if (interruptedInit) c.warn(file, 'INIT_INCOMPLETE', `${c.rel(file)} is missing: an interrupted init (running the same init again completes it)`);
    else c.error(file, 'MISSING_POINTER', `${c.rel(file)} is missing: the scenario serves no bundle`);
    return undefined;
  }
  if (!active) return undefined;
  const bundle = c.bundle(active.bundle_digest);
  if (!bundle) c.error(file, 'MISSING_BUNDLE', `${c.rel(file)} points at ${active.bundle_digest}, which has no valid manifest`);
  else if (bundle.evaluator_epoch !== active.evaluator_epoch) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: evaluator_epoch differs from the active manifest's`);
  if (active.rollback_target_digest && !c.bundle(active.rollback_target_digest)) c.error(file, 'MISSING_BUNDLE', `${c.rel(file)}: rollback target ${active.rollback_target_digest} has no valid manifest`);
  if (active.promotion_id !== null) {
    const promo = c.attempt(file, () => readPromotion(store, active.promotion_id!));
    if (promo === null) c.error(file, 'MISSING_PROMOTION', `${c.rel(file)} names promotion ${active.promotion_id}, which does not exist`);
    if (promo) {
      if (promo.candidate_digest !== active.bundle_digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: promotion ${promo.promotion_id} promoted ${promo.candidate_digest}, not the active bundle`);
      if (promo.rollback_target_digest !== active.rollback_target_digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: rollback target differs from promotion ${promo.promotion_id}`);
      if (active.manifest_diff_digest !== undefined && active.manifest_diff_digest !== promo.manifest_diff_digest) c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: manifest_diff_digest differs from promotion ${promo.promotion_id}`);
    }
  }
  for (const [digest, r] of records) {
    const recordFile = store.paths.record(digest);
    if (digest === active.bundle_digest && r.lifecycle !== 'active') c.warn(recordFile, 'LIFECYCLE_PENDING', `${c.rel(recordFile)}: the active bundle's record says "${r.lifecycle}" (a pointer move whose lifecycle update was interrupted; the next promote, rollback or repair completes it)`);
    if (digest !== active.bundle_digest && r.lifecycle === 'active') c.warn(recordFile, 'LIFECYCLE_PENDING', `${c.rel(recordFile)}: says "active" but the pointer names ${active.bundle_digest}`);
  }
  // The texts of manifests this verify has already re-hashed: read again for their texts only, not hashed twice.
  const texts = (digest: string) => readBundleTexts(store, digest);
  const served = bundle ? texts(active.bundle_digest) : null;
  if (served) verifyMirrors(c, served, texts);
  return active;
}
