import {fail, isAutoctxError} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {
  DEFAULT_APPROVAL_WINDOW_DAYS,
  EXECUTION_KEY,
  approvalDeadline,
  approvalProblem,
  derivedStatus,
  type ExecutionStatus,
  type RollbackApproval,
  type RollbackExecution,
} from '../../model/rollback/rollback-execution.js';
import type {KnowledgeStore, ScenarioStore} from '../../store/index.js';
import {
  approvalKeyProblem,
  createApproval,
  executionSha256,
  listExecutionKeys,
  readApproval,
  readExecution,
} from '../../store/kinds/rollback/rollback-execution.js';
import {checkActor, resolveActor} from '../common/actor.js';
import {prepareSigning, signingInputs} from '../signing/signing.js';
import {publicKeyOf} from '../signing/signing-key.js';
import {fingerprint} from '../../model/signing/sshsig.js';
import {signingKeyOf} from '../../store/kinds/signing/signatures.js';
import {requireSigned} from '../signing/trust-gates.js';
import {lockTimeout, now, openKnowledge, type StoreOptions} from '../common/store-options.js';

/** The rollback service's records as readers see them: show, list, approve, and what status says of them. */

export interface ExecutionView {
  execution_key: string;
  /** As derived when read: APPROVED and EXPIRED_UNAPPROVED are never stored. */
  status: ExecutionStatus;
  scope: string;
  emergency: boolean;
  from_version: string | null;
  from_digest: string | null;
  to_version: string | null;
  to_digest: string | null;
  actor: string;
  executed_at: string;
  /** For an emergency rollback: when its approval window closes. */
  approval_deadline: string | null;
  approved_by: string | null;
}

/**
 * The emergency rollbacks' approval window in days: the team's, else the
 * default. The rollback commands fail on a malformed autoctx.config.json
 * (CONFIG_INVALID, exit 2); status and verify, which only report, judge by
 * the default then (`lenient`).
 */
export function approvalWindowOf(knowledge: KnowledgeStore, lenient = false): number {
  try {
    return knowledge.approvalWindowDays() ?? DEFAULT_APPROVAL_WINDOW_DAYS;
  } catch (error) {
    if (!lenient || !isAutoctxError(error)) throw error;
    return DEFAULT_APPROVAL_WINDOW_DAYS;
  }
}

function openWithWindow(options: StoreOptions): {store: ScenarioStore; windowDays: number} {
  const k = openKnowledge(options);
  const store = k.scenario(k.resolveScenario(options.scenario));
  return {store, windowDays: approvalWindowOf(k)};
}

function viewOf(r: RollbackExecution, approval: RollbackApproval | null, at: Date, windowDays: number): ExecutionView {
  return {
    execution_key: r.execution_key,
    status: derivedStatus(r, approval, at, windowDays),
    scope: r.scope,
    emergency: r.emergency,
    from_version: r.from_version,
    from_digest: r.from_digest,
    to_version: r.to_version,
    to_digest: r.to_digest,
    actor: r.actor,
    executed_at: r.executed_at,
    approval_deadline: r.status === 'AWAITING_APPROVAL' ? isoTimestamp(approvalDeadline(r, windowDays)) : null,
    approved_by: approval?.approved_by ?? null,
  };
}

/** An approval that is not bound to its record, or came too late, is an integrity error on read (verify names it). */
function checkedApproval(store: ScenarioStore, r: RollbackExecution, windowDays: number): RollbackApproval | null {
  const a = readApproval(store, r.execution_key);
  if (!a) return null;
  const problem =
    approvalProblem(r, executionSha256(store, r.execution_key)!, a) ?? approvalKeyProblem(store, r.execution_key);
  if (problem) {
    const rel = store.guard.relative(store.paths.rollbackApproval(r.execution_key));
    fail('INTEGRITY', `${rel}: ${problem}; run autoctx verify`, {file: rel});
  }
  return a;
}

function requireKey(key: string): void {
  if (!EXECUTION_KEY.test(key))
    fail(
      'INVALID_INPUT',
      `not a rollback execution key: ${JSON.stringify(key)} (RBX-<14 digits>-<8 hex>, as rollback list shows them)`,
    );
}

function requireExecution(store: ScenarioStore, key: string): RollbackExecution {
  const r = readExecution(store, key);
  if (!r)
    fail(
      'UNKNOWN_EXECUTION',
      `scenario "${store.scenario}" has no rollback execution ${key} (autoctx rollback list shows them)`,
      {execution_key: key},
    );
  return r;
}

export interface ShowResult {
  status: 'ok';
  scenario: string;
  execution: RollbackExecution;
  view: ExecutionView;
  approval: RollbackApproval | null;
}

export function rollbackShow(options: StoreOptions & {key: string}): ShowResult {
  requireKey(options.key);
  const {store, windowDays} = openWithWindow(options);
  const r = requireExecution(store, options.key);
  const approval = checkedApproval(store, r, windowDays);
  return {
    status: 'ok',
    scenario: store.scenario,
    execution: r,
    view: viewOf(r, approval, now(options), windowDays),
    approval,
  };
}

export interface ListResult {
  status: 'ok';
  scenario: string;
  executions: ExecutionView[];
}

export function executionViews(store: ScenarioStore, at: Date, windowDays: number): ExecutionView[] {
  return listExecutionKeys(store)
    .flatMap((key) => {
      const r = readExecution(store, key);
      return r ? [viewOf(r, checkedApproval(store, r, windowDays), at, windowDays)] : [];
    })
    .sort((a, b) =>
      a.executed_at < b.executed_at
        ? -1
        : a.executed_at > b.executed_at
          ? 1
          : a.execution_key < b.execution_key
            ? -1
            : 1,
    );
}

/** Every execution, oldest first (the key begins with the UTC time). */
export function rollbackList(options: StoreOptions & {scope?: string | undefined}): ListResult {
  const {store, windowDays} = openWithWindow(options);
  const all = executionViews(store, now(options), windowDays);
  return {
    status: 'ok',
    scenario: store.scenario,
    executions: options.scope === undefined ? all : all.filter((v) => v.scope === options.scope!.trim().toLowerCase()),
  };
}

/** What status says: the emergency rollbacks still waiting, and those whose window closed unapproved. */
export function rollbackStatus(store: ScenarioStore, at: Date, windowDays: number): ExecutionView[] {
  return executionViews(store, at, windowDays).filter(
    (v) => v.status === 'AWAITING_APPROVAL' || v.status === 'EXPIRED_UNAPPROVED',
  );
}

export interface ApproveResult {
  status: 'approved';
  scenario: string;
  execution_key: string;
  approved_by: string;
  approved_at: string;
  execution_sha256: string;
}

/**
 * `autoctx rollback approve RBX-…`: the second approver of an emergency
 * rollback. Under the scenario lock, so of two concurrent approvals exactly
 * one is written; it is bound to the SHA-256 of the record's exact bytes.
 */
export async function rollbackApprove(
  options: StoreOptions & {key: string; actor?: string | undefined},
): Promise<ApproveResult> {
  requireKey(options.key);
  if (options.actor !== undefined) checkActor(options.actor);
  lockTimeout(options);
  const inputs = signingInputs(options);
  const {store, windowDays} = openWithWindow(options);
  const approver = resolveActor(options.actor, store.paths.dir);
  const executed = requireExecution(store, options.key);
  // In a signed tree (or with an anchor): the approver's key must list the approver role, and the record approved must
  // carry its executor's valid signature.
  const signing = prepareSigning(store, options, {actor: approver, role: 'approve'}, inputs);
  if (signing.trust)
    requireSigned(store, signing.trust, {
      file: store.paths.rollbackExecution(executed.execution_key),
      kind: 'rollback-execution',
      at: executed.executed_at,
      principal: executed.actor,
    });
  // A different principal is not enough: one key listed under two principals is one person. The approver's key must not
  // be the executor's.
  const executorKey = signingKeyOf(store, store.paths.rollbackExecution(executed.execution_key));
  if (signing.key && executorKey?.equals(publicKeyOf(signing.key))) {
    fail(
      'APPROVER_MUST_DIFFER',
      `signing key ${signing.key.file} (${fingerprint(executorKey)}) signed ${executed.execution_key} as ` +
        `${executed.actor}; a different key must approve it, whatever principal it names`,
      {execution_key: executed.execution_key},
    );
  }
  return store.withLock(lockTimeout(options), () => {
    const r = requireExecution(store, options.key);
    const at = now(options);
    if (r.status !== 'AWAITING_APPROVAL')
      fail(
        'NOT_AWAITING_APPROVAL',
        `${r.execution_key} is ${r.status}: only an emergency rollback awaits an approval`,
        {execution_key: r.execution_key},
      );
    const existing = checkedApproval(store, r, windowDays);
    if (existing)
      fail(
        'ALREADY_APPROVED',
        `${r.execution_key} was approved by ${existing.approved_by} at ${existing.approved_at}; nothing was written`,
        {execution_key: r.execution_key},
      );
    if (approver === r.actor)
      fail('APPROVER_MUST_DIFFER', `${approver} executed ${r.execution_key}; a different principal must approve it`, {
        execution_key: r.execution_key,
      });
    const deadline = approvalDeadline(r, windowDays);
    if (at.getTime() > deadline.getTime())
      fail(
        'APPROVAL_EXPIRED',
        `${r.execution_key}'s ${windowDays}-day approval window closed at ${isoTimestamp(deadline)}; it ` +
          `stays EXPIRED_UNAPPROVED`,
        {execution_key: r.execution_key},
      );
    const approval: RollbackApproval = {
      schema_version: 1,
      execution_key: r.execution_key,
      execution_sha256: executionSha256(store, r.execution_key)!,
      approved_by: approver,
      approved_at: isoTimestamp(at),
    };
    createApproval(store, approval);
    return {
      status: 'approved',
      scenario: store.scenario,
      execution_key: r.execution_key,
      approved_by: approver,
      approved_at: approval.approved_at,
      execution_sha256: approval.execution_sha256,
    };
  });
}
