import {jsonEqual} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import type {ActivePointer, PromotionRecord, RollbackRecord, RolloverRecord} from '../../../model/promotion/records.js';
import {readDocument} from '../../documents.js';
import {exists, listDir} from '../../files/fs.js';
import type {KindContext} from '../common/kind-context.js';
import {rollbackId, rolloverId} from '../../../model/promotion/records.js';
import {checkPolicy, type Findings} from '../../findings.js';
import {readManifestDiff} from '../bundle/manifest-diff.js';
import {createSigned} from '../signing/signatures.js';
import {readActive} from './active-pointer.js';
import {hasBundle} from '../bundle/bundle.js';
import type {ScenarioCheck} from '../common/kind-steps.js';

/** promotions/, rollbacks/ and rollovers/<id>.json: one immutable record per pointer move of that kind. */
export const PROMOTION_SCHEMA = 'promotion' as const;
export const ROLLBACK_SCHEMA = 'rollback' as const;
export const ROLLOVER_SCHEMA = 'rollover' as const;
const ID_FILE = /^[0-9a-f]{32}\.json$/;

function listIds(ctx: KindContext, dir: string): string[] {
  return listDir(ctx.guard, dir)
    .filter((e) => e.isFile() && ID_FILE.test(e.name))
    .map((e) => e.name.slice(0, -5));
}

/** A record stored under its own id: it must name the id it is stored as. */
function readById<T>(
  ctx: KindContext,
  file: string,
  schema: typeof PROMOTION_SCHEMA | typeof ROLLBACK_SCHEMA | typeof ROLLOVER_SCHEMA,
  what: string,
  id: string,
  idOf: (r: T) => string,
): T | null {
  return readDocument<T>(ctx.guard, file, schema, (value) => {
    const r = value as unknown as T;
    if (idOf(r) !== id) fail('DIGEST_MISMATCH', `${what} record names id ${idOf(r)} but is stored as ${id}`);
    return r;
  });
}

export function listPromotionIds(ctx: KindContext): string[] {
  return listIds(ctx, ctx.paths.promotionsDir);
}

export function readPromotion(ctx: KindContext, id: string): PromotionRecord | null {
  return readById<PromotionRecord>(
    ctx,
    ctx.paths.promotion(id),
    PROMOTION_SCHEMA,
    'promotion',
    id,
    (p) => p.promotion_id,
  );
}

export function writePromotion(ctx: KindContext, record: PromotionRecord): boolean {
  if (ctx.signer) {
    createSigned(ctx, ctx.paths.promotion(record.promotion_id), PROMOTION_SCHEMA, record, 'promotion');
    return true;
  }
  return ctx.writer.createDocument(ctx.paths.promotion(record.promotion_id), PROMOTION_SCHEMA, record);
}

export function listRollbackIds(ctx: KindContext): string[] {
  return listIds(ctx, ctx.paths.rollbacksDir);
}

export function readRollback(ctx: KindContext, id: string): RollbackRecord | null {
  return readById<RollbackRecord>(ctx, ctx.paths.rollback(id), ROLLBACK_SCHEMA, 'rollback', id, (r) => r.rollback_id);
}

export function writeRollback(ctx: KindContext, record: RollbackRecord): boolean {
  return ctx.writer.createDocument(ctx.paths.rollback(record.rollback_id), ROLLBACK_SCHEMA, record);
}
export function listRolloverIds(ctx: KindContext): string[] {
  return listIds(ctx, ctx.paths.rolloversDir);
}

export function readRollover(ctx: KindContext, id: string): RolloverRecord | null {
  return readById<RolloverRecord>(ctx, ctx.paths.rollover(id), ROLLOVER_SCHEMA, 'rollover', id, (r) => r.rollover_id);
}

/** Under the lock: the rollover's record, signed first when this store signs (a pointer move, like a promotion). */
export function writeRollover(ctx: KindContext, record: RolloverRecord): boolean {
  const file = ctx.paths.rollover(record.rollover_id);
  if (ctx.signer && !exists(file)) {
    createSigned(ctx, file, ROLLOVER_SCHEMA, record, 'rollover');
    return true;
  }
  return ctx.writer.createDocument(file, ROLLOVER_SCHEMA, record);
}

/**
 * Whether a parentless manifest without its record is an interrupted init
 * (no pointer yet) or an interrupted rollover (a rollover record to it from
 * the pointer as it stands): the only crash states in which a baseline has no
 * record. Any other baseline without one lost it.
 */
export function interruptedBaseline(ctx: KindContext, digest: string, active: ActivePointer | null): boolean {
  if (active === null) return true;
  return listRolloverIds(ctx).some((id) => {
    const r = readRollover(ctx, id);
    return (
      r !== null &&
      r.to_digest === digest &&
      r.from_digest === active.bundle_digest &&
      r.from_activated_at === active.activated_at
    );
  });
}

/**
 * verify: each promotion and rollback record names bundles that exist, with the lineage, epoch, rollback target and id
 * its move implies.
 */
export function verifyHistory(c: Findings): void {
  const {store} = c;
  for (const id of listPromotionIds(store)) {
    const file = store.paths.promotion(id);
    const p = c.attempt(file, () => readPromotion(store, id));
    if (!p) continue;
    checkPolicy(c, file, p.confirmation_policy, p.confirmation_policy_digest);
    for (const d of [p.candidate_digest, p.incumbent_digest])
      if (!c.bundle(d))
        c.error(
          file,
          'MISSING_BUNDLE',
          `${c.rel(file)} names bundle ${d}, whose manifest ${c.rel(store.paths.bundle(d))} is missing or invalid`,
        );
    const cand = c.bundle(p.candidate_digest);
    if (cand && cand.parent_digest !== p.incumbent_digest)
      c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: the candidate's parent is not the recorded incumbent`);
    if (cand && cand.evaluator_epoch !== p.evaluator_epoch)
      c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: evaluator_epoch differs from the candidate's manifest`);
    if (p.rollback_target_digest !== p.incumbent_digest)
      c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: the rollback target is not the incumbent it replaced`);
    const diff = store.paths.manifestDiff(p.candidate_digest);
    const d = c.attempt(diff, () => readManifestDiff(store, p.candidate_digest));
    if (d && d.digest !== p.manifest_diff_digest)
      c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: manifest_diff_digest is not the candidate's manifest diff`);
  }
  for (const id of listRollbackIds(store)) {
    const file = store.paths.rollback(id);
    const r = c.attempt(file, () => readRollback(store, id));
    if (!r) continue;
    if (rollbackId(r.from_digest, r.from_activated_at, r.to_digest) !== id)
      c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: rollback id does not match the move it records`);
    for (const d of [r.from_digest, r.to_digest])
      if (!c.bundle(d))
        c.error(
          file,
          'MISSING_BUNDLE',
          `${c.rel(file)} names bundle ${d}, whose manifest ${c.rel(store.paths.bundle(d))} is missing or invalid`,
        );
    if (r.scenario !== store.scenario)
      c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: records a move in scenario "${r.scenario}"`);
    const to = c.bundle(r.to_digest);
    if (to && to.evaluator_epoch !== r.evaluator_epoch)
      c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: evaluator_epoch differs from the restored bundle's`);
  }
  for (const id of listRolloverIds(store)) {
    const file = store.paths.rollover(id);
    const r = c.attempt(file, () => readRollover(store, id));
    if (!r) continue;
    if (rolloverId(r.from_digest, r.from_activated_at, r.evaluator_epoch) !== id)
      c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: rollover id does not match the move it records`);
    if (r.scenario !== store.scenario)
      c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: records a move in scenario "${r.scenario}"`);
    // A rollover writes its record, then the new baseline: one interrupted in between has no baseline yet (the
    // pointer's check reports it pending).
    const active = c.attempt(store.paths.active, () => readActive(store));
    const pending =
      active &&
      active.bundle_digest === r.from_digest &&
      active.activated_at === r.from_activated_at &&
      !hasBundle(store, r.to_digest);
    for (const d of pending ? [r.from_digest] : [r.from_digest, r.to_digest])
      if (!c.bundle(d))
        c.error(
          file,
          'MISSING_BUNDLE',
          `${c.rel(file)} names bundle ${d}, whose manifest ${c.rel(store.paths.bundle(d))} is missing or invalid`,
        );
    const to = c.bundle(r.to_digest);
    const from = c.bundle(r.from_digest);
    if (to && (to.evaluator_epoch !== r.evaluator_epoch || to.parent_digest !== null))
      c.error(
        file,
        'LINEAGE_MISMATCH',
        `${c.rel(file)}: the new baseline is not a parentless bundle of epoch "${r.evaluator_epoch}"`,
      );
    if (from && from.evaluator_epoch !== r.from_evaluator_epoch)
      c.error(
        file,
        'LINEAGE_MISMATCH',
        `${c.rel(file)}: from_evaluator_epoch differs from the bundle it moved away from`,
      );
    if (to && from && !jsonEqual(to.components, from.components))
      c.error(
        file,
        'LINEAGE_MISMATCH',
        `${c.rel(file)}: the new baseline's components are not those of the bundle it re-anchors`,
      );
  }
}

export const historyCheck: ScenarioCheck = {
  order: 400,
  scenario(c) {
    verifyHistory(c);
  },
};
