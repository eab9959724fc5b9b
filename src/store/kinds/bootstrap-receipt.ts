import {fail} from '../../errors.js';
import {isExpired, isReceiptId, RECEIPT_RETENTION_DAYS, type BootstrapReceipt} from '../../model/bootstrap-receipt.js';
import fs from 'node:fs';
import path from 'node:path';
import {listDir} from '../fs.js';
import type {StateArea} from '../state-area.js';

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
 * Under the state lock: remove receipts created more than 30 days before
 * `now`. A receipt that cannot be read is left for a person to look at.
 */
export function pruneReceipts(area: StateArea, now: Date): number {
  const dir = area.file('bootstrap', 'receipts');
  let removed = 0;
  for (const e of listDir(area.guard, dir)) {
    const m = /^(bcr_[0-9a-f]{32})\.json$/.exec(e.name);
    if (!e.isFile() || !m) continue;
    // A file changed within the period holds a receipt made within it (made at or before its last write): not read.
    if (!mayBeExpired(path.join(dir, e.name), now)) continue;
    let receipt: BootstrapReceipt | null = null;
    try {
      receipt = readReceipt(area, m[1]!);
    } catch {
      continue;
    }
    if (receipt && isExpired(receipt, now)) {
      area.writer.remove(receiptFile(area, m[1]!));
      removed++;
    }
  }
  return removed;
}

/**
 * Whether a file may hold an expired receipt: last written before the
 * retention period (what it holds was made no later), or after `now` (a
 * clock that is not the file system's: read it to know).
 */
export function mayBeExpired(file: string, now: Date): boolean {
  try {
    const t = fs.statSync(file).mtimeMs;
    return t < now.getTime() - RECEIPT_RETENTION_DAYS * 86_400_000 || t > now.getTime();
  } catch {
    return false;
  }
}
