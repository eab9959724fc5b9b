import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../errors.js';
import {
  assertReceiptId,
  isExpired,
  type BootstrapReceipt,
  type ReceiptState,
} from '../../model/delivery/bootstrap-receipt.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import type {KnowledgeStore} from '../../store/index.js';
import {readReceipt, writeReceipt} from '../../store/kinds/delivery/bootstrap-receipt.js';
import {lockTimeout, now, openKnowledge, type StoreOptions} from '../common/store-options.js';

export interface ClaimOptions extends StoreOptions {
  receipt: string;
  outcome: string;
}

export interface ClaimResult {
  status: 'claimed' | 'unchanged';
  receipt_id: string;
  scenario: string;
  state: ReceiptState;
}

/**
 * Claim a pending receipt once: injected or failed. A second injected claim
 * is refused (RECEIPT_ALREADY_CLAIMED, exit 6) even when the receipt is
 * already injected; a failed claim of a terminal receipt returns it as it is.
 */
export async function claim(options: ClaimOptions): Promise<ClaimResult> {
  assertReceiptId(options.receipt);
  if (options.outcome !== 'injected' && options.outcome !== 'failed')
    fail('USAGE', `--outcome must be injected or failed, got ${JSON.stringify(options.outcome)}`);
  const outcome = options.outcome;
  const knowledge = openKnowledge(options);
  const scenario = options.scenario !== undefined ? knowledge.resolveScenario(options.scenario) : undefined;
  const area = knowledge.state();
  const known = (receipt: BootstrapReceipt | null): BootstrapReceipt => {
    if (!receipt || (scenario !== undefined && receipt.scenario !== scenario))
      fail(
        'RECEIPT_NOT_FOUND',
        `no receipt ${options.receipt}${scenario !== undefined ? ` for scenario "${scenario}"` : ''}`,
      );
    return receipt;
  };
  known(readReceipt(area, options.receipt)); // an unknown receipt is refused before anything is locked
  return area.withLock(lockTimeout(options), () => {
    const receipt = known(readReceipt(area, options.receipt));
    if (receipt.state === 'pending') {
      writeReceipt(area, {...receipt, state: outcome, updated_at: isoTimestamp(now(options))});
      return {status: 'claimed' as const, receipt_id: receipt.receipt_id, scenario: receipt.scenario, state: outcome};
    }
    if (outcome === 'injected')
      fail(
        'RECEIPT_ALREADY_CLAIMED',
        `receipt ${receipt.receipt_id} is already ${receipt.state}; a delivery is claimed once`,
      );
    return {
      status: 'unchanged' as const,
      receipt_id: receipt.receipt_id,
      scenario: receipt.scenario,
      state: receipt.state,
    };
  });
}

/**
 * A receipt for recall's dedup: the injected receipt of this scenario, else null (absent, stale, foreign or not
 * injected: ignored).
 */
export function deliveredReceipt(
  knowledge: KnowledgeStore,
  scenario: string,
  id: string | undefined,
  at: Date,
): BootstrapReceipt | null {
  if (id === undefined) return null;
  assertReceiptId(id);
  let receipt: BootstrapReceipt | null;
  try {
    receipt = readReceipt(knowledge.state(), id);
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    return null;
  }
  if (!receipt || receipt.scenario !== scenario || receipt.state !== 'injected') return null;
  return isExpired(receipt, at) ? null : receipt;
}
