import {sha256Hex} from '../../canonical/index.js';
import type {ActivePointer} from '../promotion/records.js';

/**
 * The rollback service's records (spec 003 "Rollback", reference C.4): one
 * immutable execution record per `autoctx rollback`, refused ones included,
 * under an execution key RBX-…, and one immutable approval beside an
 * emergency execution. A record's status as stored is EXECUTED, REFUSED or
 * AWAITING_APPROVAL; APPROVED and EXPIRED_UNAPPROVED are derived when read
 * (an immutable record cannot change, and time passing is not an edit).
 * Pure.
 */
export const STORED_STATUSES = ['EXECUTED', 'REFUSED', 'AWAITING_APPROVAL'] as const;
export type StoredStatus = (typeof STORED_STATUSES)[number];
export type ExecutionStatus = StoredStatus | 'APPROVED' | 'EXPIRED_UNAPPROVED';

/** The conditions every rollback checks and records, in this order, whichever form it takes. */
export const ROLLBACK_CONDITIONS = {
  FROM_IS_ACTIVE: "the release rolled back from is the scope's current ACTIVE",
  TARGET_DECLARED:
    "the target is the recorded rollback target, or (with --to) one the ACTIVE release's descriptor declares",
  TARGET_SERVED: 'the target has served before in this scope',
  TARGET_NOT_RETIRED: 'the target is not RETIRED',
  TARGET_NOT_REJECTED: "the target's bundle is not a rejected candidate (a rejected bundle never serves)",
  TARGET_VERIFIES: "the target's bundle (and its descriptor, if named) verifies",
  TARGET_RUNNABLE: "the target is in the scope's runnable set",
  RATIONALE_GIVEN: 'a rationale is given',
} as const;
export type ConditionCode = keyof typeof ROLLBACK_CONDITIONS;

/**
 * The conditions a record written before TARGET_NOT_REJECTED was checked carries: every code but that one, in order.
 */
export const ROLLBACK_CONDITIONS_BEFORE_REJECTION = Object.keys(ROLLBACK_CONDITIONS).filter(
  (c) => c !== 'TARGET_NOT_REJECTED',
);

export interface Condition {
  code: ConditionCode;
  passed: boolean;
  detail: string;
}

export interface RollbackExecution {
  schema_version: 2;
  execution_key: string;
  scenario: string;
  scope: string;
  status: StoredStatus;
  emergency: boolean;
  /** The target as asked for (--to), null for the recorded rollback target. */
  requested_target: string | null;
  from_version: string | null;
  from_digest: string | null;
  /** Global scope: the activated_at of the pointer it moved away from (which makes it a pointer move). */
  from_activated_at: string | null;
  to_version: string | null;
  to_digest: string | null;
  /** The restored bundle's epoch (the pointer it writes carries it); null when refused without a target. */
  evaluator_epoch: string | null;
  /** Outside the global scope: the registry digest it decided on (null: none yet). */
  registry_before: string | null;
  rationale: string;
  actor: string;
  executed_at: string;
  conditions: Condition[];
}

export interface RollbackApproval {
  schema_version: 1;
  execution_key: string;
  /** SHA-256 of the exact bytes of the execution record approved. */
  execution_sha256: string;
  approved_by: string;
  approved_at: string;
}

export const EXECUTION_KEY = /^RBX-\d{14}-[0-9a-f]{8}$/;

/** RBX-<UTC yyyyMMddHHmmss>-<8 hex of SHA-256(scope|scenario|from|to|executed_at)>. */
export function executionKey(r: {
  scope: string;
  scenario: string;
  from_digest: string | null;
  to_digest: string | null;
  executed_at: string;
}): string {
  const stamp = r.executed_at.slice(0, 19).replace(/[-T:]/g, '');
  const hash = sha256Hex(
    [r.scope, r.scenario, r.from_digest ?? '-', r.to_digest ?? '-', r.executed_at].join('|'),
  ).slice(0, 8);
  return `RBX-${stamp}-${hash}`;
}

/** Whether the record moved what serves (global: the pointer; elsewhere: the registry). */
export function executed(r: RollbackExecution): boolean {
  return r.status !== 'REFUSED';
}

/** The pointer an executed global rollback writes, as the Python implementation's rollback writes it. */
export function executionPointer(r: RollbackExecution): ActivePointer {
  return {
    schema_version: 1,
    bundle_digest: r.to_digest!,
    evaluator_epoch: r.evaluator_epoch!,
    promotion_id: null,
    rollback_target_digest: r.from_digest,
    activated_at: r.executed_at,
    rationale: `rollback: ${r.rationale}`,
  };
}

export const DEFAULT_APPROVAL_WINDOW_DAYS = 7;
const DAY_MS = 86_400_000;

/** When an emergency execution's approval window closes. */
export function approvalDeadline(r: RollbackExecution, windowDays: number): Date {
  return new Date(Date.parse(r.executed_at) + windowDays * DAY_MS);
}

/**
 * The status a reader sees: the stored one, except that an emergency
 * execution with an approval bound to it reads APPROVED, and one without an
 * approval past its window reads EXPIRED_UNAPPROVED.
 */
export function derivedStatus(
  r: RollbackExecution,
  approval: RollbackApproval | null,
  now: Date,
  windowDays: number,
): ExecutionStatus {
  if (r.status !== 'AWAITING_APPROVAL') return r.status;
  if (approval) return 'APPROVED';
  return now.getTime() > approvalDeadline(r, windowDays).getTime() ? 'EXPIRED_UNAPPROVED' : 'AWAITING_APPROVAL';
}

/**
 * What is wrong with an approval of a record (null: it is bound to it),
 * whoever wrote it. Never a comparison of two times: the executor's and the
 * approver's clocks are two machines' clocks, and a valid approval must not
 * become invalid because one of them was off. What orders the approval after
 * the execution is its binding to the record's exact bytes (execution_sha256);
 * the window is enforced when approving, by the approver's clock under the
 * lock. A stamp that reads out of order is a note (approvalSkew).
 */
export function approvalProblem(r: RollbackExecution, recordSha256: string, a: RollbackApproval): string | null {
  if (a.execution_key !== r.execution_key) return `it approves ${a.execution_key}, not ${r.execution_key}`;
  if (r.status !== 'AWAITING_APPROVAL')
    return `${r.execution_key} is ${r.status}: only an emergency rollback awaits an approval`;
  if (a.execution_sha256 !== recordSha256)
    return (
      `it is bound to another version of ${r.execution_key} (execution_sha256 differs): the record or the ` +
      `approval was edited`
    );
  if (a.approved_by === r.actor) return `it is a self-approval: ${a.approved_by} executed the rollback`;
  return null;
}

/**
 * How an approval's stamp reads against its execution's, when out of order (null: in order): the two machines' clocks
 * differed.
 */
export function approvalSkew(r: RollbackExecution, a: RollbackApproval, windowDays: number): string | null {
  const [approved, executed] = [Date.parse(a.approved_at), Date.parse(r.executed_at)];
  if (approved < executed)
    return (
      `approved_at (${a.approved_at}) reads ${((executed - approved) / 1000).toFixed(3)} s before ` +
      `executed_at (${r.executed_at})`
    );
  if (approved > approvalDeadline(r, windowDays).getTime())
    return (
      `approved_at (${a.approved_at}) reads after the ${windowDays}-day window from executed_at ` + `(${r.executed_at})`
    );
  return null;
}
