import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';
import {isExpired, isReceiptId, type BootstrapReceipt} from '../../../model/delivery/bootstrap-receipt.js';
import path from 'node:path';
import {retentionScan} from './retention.js';
import type {StateArea} from '../../state-area.js';

/**
 * .state/bootstrap/receipts/<receipt_id>.json: delivery receipts, per
 * machine (never committed), one file each, written under the state area's
 * lock. A keyed event's receipt id derives from its key, so one event has
 * one file and concurrent prepares of it meet there.
 */
export const RECEIPT_SCHEMA = 'bootstrap-receipt' as const;

function receiptFile(area: StateArea, id: string): string {
  if (!isReceiptId(id)) fail('INVALID_INPUT', `not a receipt id: ${JSON.stringify(id)}`);
  return area.file('bootstrap', 'receipts', `${id}.json`);
}

export function readReceipt(area: StateArea, id: string): BootstrapReceipt | null {
  return area.readDocument<BootstrapReceipt>(receiptFile(area, id), RECEIPT_SCHEMA, (v) => {
    const r = v as unknown as BootstrapReceipt;
    if (r.receipt_id !== id) fail('DIGEST_MISMATCH', `holds receipt ${r.receipt_id}, not ${id}`);
    return r;
  });
}

/** Under the state lock: write a receipt (its folder made 0700 on first use, the file 0600). */
export function writeReceipt(area: StateArea, receipt: BootstrapReceipt): void {
  area.writer.mkdir(area.file('bootstrap'));
  area.writer.mkdir(area.file('bootstrap', 'receipts'));
  area.writer.replaceDocument(receiptFile(area, receipt.receipt_id), RECEIPT_SCHEMA, receipt);
}

/**
 * Under the state lock: remove receipts created more than 30 days before the
 * time retention is judged at (`now`, or the newest receipt's recorded time
 * when earlier: retention.ts). A receipt that cannot be read is left for a
 * person to look at.
 */
export function pruneReceipts(area: StateArea, now: Date): number {
  const idOf = (file: string) => path.basename(file, '.json');
  const scan = retentionScan(
    area,
    area.file('bootstrap', 'receipts'),
    /^bcr_[0-9a-f]{32}\.json$/,
    (file) => readReceipt(area, idOf(file))?.updated_at ?? null,
    now,
  );
  let removed = 0;
  for (const file of scan?.files ?? []) {
    let receipt: BootstrapReceipt | null = null;
    try {
      receipt = readReceipt(area, idOf(file));
    } catch (error) {
      rethrowUnless(error, isAutoctxError, isSystemError);
      continue;
    }
    if (receipt && isExpired(receipt, scan!.at)) {
      area.writer.remove(receiptFile(area, idOf(file)));
      removed++;
    }
  }
  return removed;
}
