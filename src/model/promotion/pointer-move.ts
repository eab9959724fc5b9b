import {
  rolloverRationale,
  type ActivePointer,
  type PromotionRecord,
  type RollbackRecord,
  type RolloverRecord,
} from './records.js';
import {executionPointer, type RollbackExecution} from '../rollback/rollback-execution.js';

/**
 * The history of the serving pointer. Every way active.json changes leaves a
 * record that determines the pointer it wrote: init (the baseline's record),
 * a promotion, a rollback, an epoch rollover. The pointer must be the one the
 * newest move on record wrote, and each move must have moved away from what
 * an earlier recorded move made active, back to init.
 */
export type MoveKind = 'init' | 'promotion' | 'rollback' | 'rollover';

export interface PointerMove {
  kind: MoveKind;
  /** The record's id (for init: the baseline's digest). */
  id: string;
  to: string;
  to_epoch: string;
  /** The bundle it moved away from (null for init, and for a rollover the Python implementation wrote). */
  from: string | null;
  /** The activated_at of the pointer it moved away from, where the record keeps it (rollbacks, rollovers). */
  from_activated_at: string | null;
  /** For a rollover the Python implementation wrote: the epoch it moved away from. */
  from_epoch?: string;
  /** When it moved: the activated_at of the pointer it wrote. */
  at: string;
  /** The exact pointer it wrote (null for init, whose time the Python implementation does not keep). */
  pointer: ActivePointer | null;
  /** A move of the Python implementation's, proven only by active.json's own fields. */
  foreign?: true;
}

export function promotionMove(p: PromotionRecord): PointerMove {
  const pointer: ActivePointer = {
    schema_version: 1,
    bundle_digest: p.candidate_digest,
    evaluator_epoch: p.evaluator_epoch,
    promotion_id: p.promotion_id,
    rollback_target_digest: p.rollback_target_digest,
    activated_at: p.promoted_at,
    rationale: p.rationale,
    manifest_diff_digest: p.manifest_diff_digest,
  };
  return {
    kind: 'promotion',
    id: p.promotion_id,
    to: p.candidate_digest,
    to_epoch: p.evaluator_epoch,
    from: p.incumbent_digest,
    from_activated_at: null,
    at: p.promoted_at,
    pointer,
  };
}

export function rollbackPointer(r: RollbackRecord): ActivePointer {
  return {
    schema_version: 1,
    bundle_digest: r.to_digest,
    evaluator_epoch: r.evaluator_epoch,
    promotion_id: null,
    rollback_target_digest: r.from_digest,
    activated_at: r.rolled_back_at,
    rationale: `rollback: ${r.rationale}`,
  };
}

export function rollbackMove(r: RollbackRecord): PointerMove {
  return {
    kind: 'rollback',
    id: r.rollback_id,
    to: r.to_digest,
    to_epoch: r.evaluator_epoch,
    from: r.from_digest,
    from_activated_at: r.from_activated_at,
    at: r.rolled_back_at,
    pointer: rollbackPointer(r),
  };
}

/** An executed rollback of the global scope (the rollback service's record): a pointer move like the older records. */
export function executionMove(r: RollbackExecution): PointerMove {
  return {
    kind: 'rollback',
    id: r.execution_key,
    to: r.to_digest!,
    to_epoch: r.evaluator_epoch!,
    from: r.from_digest,
    from_activated_at: r.from_activated_at,
    at: r.executed_at,
    pointer: executionPointer(r),
  };
}

/**
 * autoctx's rollover keeps the bundle it moved away from as the rollback target (the Python implementation keeps none).
 */
export function rolloverPointer(r: RolloverRecord): ActivePointer {
  return {
    schema_version: 1,
    bundle_digest: r.to_digest,
    evaluator_epoch: r.evaluator_epoch,
    promotion_id: null,
    rollback_target_digest: r.from_digest,
    activated_at: r.rolled_over_at,
    rationale: rolloverRationale(r.from_evaluator_epoch),
  };
}

export function rolloverMove(r: RolloverRecord): PointerMove {
  return {
    kind: 'rollover',
    id: r.rollover_id,
    to: r.to_digest,
    to_epoch: r.evaluator_epoch,
    from: r.from_digest,
    from_activated_at: r.from_activated_at,
    at: r.rolled_over_at,
    pointer: rolloverPointer(r),
  };
}

/** The baseline an init made active, known from its record (created_at orders it). */
export function initMove(digest: string, epoch: string, createdAt: string): PointerMove {
  return {
    kind: 'init',
    id: digest,
    to: digest,
    to_epoch: epoch,
    from: null,
    from_activated_at: null,
    at: createdAt,
    pointer: null,
  };
}
