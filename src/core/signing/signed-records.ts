import {isAutoctxError, isJsonParseError, isSystemError, rethrowUnless} from '../../errors.js';
import {readBytes} from '../../store/files/fs.js';
import {
  listReleaseScopes,
  readReceipts,
  receiptFile,
  signedReceipt,
} from '../../store/kinds/release/release-receipt.js';
import {
  listApprovalKeys,
  listExecutionKeys,
  readApproval,
  readExecution,
} from '../../store/kinds/rollback/rollback-execution.js';
import type {SignedKind} from '../../store/kinds/signing/signatures.js';
import type {ScenarioStore} from '../../store/index.js';

import {listPromotionIds, listRolloverIds, readPromotion, readRollover} from '../../store/kinds/promotion/history.js';
import {listCandidateDigests} from '../../store/kinds/promotion/candidate-record.js';

/** One record that carries a signature: its file, kind, signed time and the principal it names. */
export interface SignedRecord {
  file: string;
  kind: SignedKind;
  at: string | null;
  principal: string | null;
  role: 'sign' | 'approve';
}

function quiet<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError, isJsonParseError);
    return null; // the record's own checks report a file that does not read back
  }
}

/** Every record of the scenario that a signed tree signs. */
export function signedRecords(store: ScenarioStore): SignedRecord[] {
  const out: SignedRecord[] = [];
  for (const id of listPromotionIds(store)) {
    const p = quiet(() => readPromotion(store, id));
    if (p)
      out.push({file: store.paths.promotion(id), kind: 'promotion', at: p.promoted_at, principal: null, role: 'sign'});
  }
  for (const digest of listCandidateDigests(store)) {
    const file = store.paths.evidenceSeal(digest);
    const bytes = readBytes(store.guard, file);
    if (!bytes) continue;
    const seal = quiet(() => JSON.parse(bytes.toString('utf8')) as {sealed_at?: string});
    out.push({file, kind: 'trial-seal', at: seal?.sealed_at ?? null, principal: null, role: 'sign'});
  }
  for (const id of listRolloverIds(store)) {
    const r = quiet(() => readRollover(store, id));
    if (r)
      out.push({file: store.paths.rollover(id), kind: 'rollover', at: r.rolled_over_at, principal: null, role: 'sign'});
  }
  for (const key of listExecutionKeys(store)) {
    const r = quiet(() => readExecution(store, key));
    if (r)
      out.push({
        file: store.paths.rollbackExecution(key),
        kind: 'rollback-execution',
        at: r.executed_at,
        principal: r.actor,
        role: 'sign',
      });
  }
  for (const key of listApprovalKeys(store)) {
    const a = quiet(() => readApproval(store, key));
    if (a)
      out.push({
        file: store.paths.rollbackApproval(key),
        kind: 'rollback-approval',
        at: a.approved_at,
        principal: a.approved_by,
        role: 'approve',
      });
  }
  for (const scope of listReleaseScopes(store)) {
    for (const r of quiet(() => readReceipts(store, scope)) ?? []) {
      if (signedReceipt(r))
        out.push({
          file: receiptFile(store, r),
          kind: 'release-receipt',
          at: r.at,
          principal: r.actor,
          role: 'sign',
        });
    }
  }
  return out;
}
