import {sha256Hex} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {
  EXECUTION_KEY,
  executionKey,
  type RollbackApproval,
  type RollbackExecution,
} from '../../../model/rollback/rollback-execution.js';
import {readDocument} from '../../documents.js';
import {listDir, readBytes} from '../../files/fs.js';
import type {KindContext} from '../common/kind-context.js';
import {createSigned, signingKeyOf} from '../signing/signatures.js';
import {fingerprint} from '../../../model/signing/sshsig.js';

/**
 * context_bundles/rollbacks/RBX-….json and rollbacks/approvals/RBX-….json
 * (autoctx additions, spec 003 "Rollback"): the rollback service's
 * immutable execution records, and the approvals of emergency ones. An
 * executed record in the global scope is also a pointer move (the pointer
 * history reads it); elsewhere the transition receipt it wrote names it.
 */
export const EXECUTION_SCHEMA = 'rollback-execution' as const;
export const APPROVAL_SCHEMA = 'rollback-approval' as const;
const FILE = /^RBX-\d{14}-[0-9a-f]{8}\.json$/;

function checkExecution(ctx: KindContext, r: RollbackExecution, key: string): RollbackExecution {
  if (r.execution_key !== key) fail('DIGEST_MISMATCH', `names execution ${r.execution_key} but is stored as ${key}`);
  if (executionKey(r) !== key)
    fail('DIGEST_MISMATCH', `its execution key is not the one its scope, bundles and time give (${executionKey(r)})`);
  if (r.scenario !== ctx.scenario)
    fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(r.scenario)}, not ${JSON.stringify(ctx.scenario)}`);
  const failed = r.conditions.filter((c) => !c.passed).length;
  if ((r.status === 'REFUSED') !== failed > 0)
    fail(
      'DIGEST_MISMATCH',
      `is ${r.status} with ${failed} failed condition(s): a rollback is refused exactly when a condition fails`,
    );
  if (r.emergency !== (r.status === 'AWAITING_APPROVAL') && r.status !== 'REFUSED')
    fail(
      'DIGEST_MISMATCH',
      `an executed ${r.emergency ? 'emergency' : 'ordinary'} rollback is ` +
        `${r.emergency ? 'AWAITING_APPROVAL' : 'EXECUTED'}, not ${r.status}`,
    );
  if (r.status !== 'REFUSED' && (r.from_digest === null || r.to_digest === null || r.evaluator_epoch === null))
    fail('DIGEST_MISMATCH', 'an executed rollback names the bundles it moved between and the restored epoch');
  if (r.status !== 'REFUSED' && (r.scope === 'global') !== (r.from_activated_at !== null))
    fail('DIGEST_MISMATCH', 'an executed rollback names from_activated_at exactly in the global scope');
  return r;
}

export function listExecutionKeys(ctx: KindContext): string[] {
  return listDir(ctx.guard, ctx.paths.rollbacksDir)
    .filter((e) => e.isFile() && FILE.test(e.name))
    .map((e) => e.name.slice(0, -5))
    .sort();
}

export function readExecution(ctx: KindContext, key: string): RollbackExecution | null {
  return readDocument<RollbackExecution>(ctx.guard, ctx.paths.rollbackExecution(key), EXECUTION_SCHEMA, (v) =>
    checkExecution(ctx, v as unknown as RollbackExecution, key),
  );
}

/** SHA-256 of the record's exact bytes: what an approval is bound to (null: no file). */
export function executionSha256(ctx: KindContext, key: string): string | null {
  const bytes = readBytes(ctx.guard, ctx.paths.rollbackExecution(key));
  return bytes ? sha256Hex(bytes) : null;
}

/** Under the scenario lock: the record, immutable. */
export function createExecution(ctx: KindContext, r: RollbackExecution): void {
  if (!EXECUTION_KEY.test(r.execution_key)) throw new Error(`internal: bad execution key ${r.execution_key}`);
  createSigned(ctx, ctx.paths.rollbackExecution(r.execution_key), EXECUTION_SCHEMA, r, 'rollback-execution');
}

export function readApproval(ctx: KindContext, key: string): RollbackApproval | null {
  return readDocument<RollbackApproval>(ctx.guard, ctx.paths.rollbackApproval(key), APPROVAL_SCHEMA, (v) => {
    const a = v as unknown as RollbackApproval;
    if (a.execution_key !== key)
      fail('DIGEST_MISMATCH', `approves ${a.execution_key} but is stored as the approval of ${key}`);
    return a;
  });
}

export function listApprovalKeys(ctx: KindContext): string[] {
  return listDir(ctx.guard, ctx.paths.rollbackApprovalsDir)
    .filter((e) => e.isFile() && FILE.test(e.name))
    .map((e) => e.name.slice(0, -5))
    .sort();
}

/**
 * Under the scenario lock: the approval, immutable (a second one of the same record is refused by the caller first).
 */
export function createApproval(ctx: KindContext, a: RollbackApproval): void {
  createSigned(ctx, ctx.paths.rollbackApproval(a.execution_key), APPROVAL_SCHEMA, a, 'rollback-approval');
}

/**
 * "The approver differs" means a different key: an approval signed with the
 * key that signed the execution it approves is a self-approval, whatever
 * principals that key is listed under (null: different keys, or either is
 * unsigned, which the signature checks judge).
 */
export function approvalKeyProblem(ctx: KindContext, key: string): string | null {
  const executor = signingKeyOf(ctx, ctx.paths.rollbackExecution(key));
  const approver = signingKeyOf(ctx, ctx.paths.rollbackApproval(key));
  if (!executor || !approver || !executor.equals(approver)) return null;
  return (
    `it is signed by key ${fingerprint(approver)}, the key that signed the execution it approves: a ` +
    `self-approval, whatever principals that key is listed under`
  );
}
