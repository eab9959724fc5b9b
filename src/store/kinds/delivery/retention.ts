import fs from 'node:fs';
import path from 'node:path';
import {RECEIPT_RETENTION_DAYS} from '../../../model/delivery/bootstrap-receipt.js';
import {listDir} from '../../files/fs.js';
import type {StateArea} from '../../state-area.js';
import {isSystemError, rethrowUnless, isAutoctxError} from '../../../errors.js';

const PERIOD_MS = RECEIPT_RETENTION_DAYS * 86_400_000;

/**
 * Retention of one folder of the state area's records (delivery receipts, a
 * host's session states): the time it is judged at, and the files that may
 * be past it. That time is `now`, or the newest time recorded in the folder
 * (in its most recently written file) when that is earlier: a record goes
 * only once a later one was recorded 30 days after it. So a clock that jumps
 * ahead prunes nothing by itself (the prune runs before the jumped run
 * records anything), and a retried event still finds its receipt when the
 * clock comes back. A clock that stays ahead and records there is taken as
 * time that passed. Null: nothing to judge (no file, or the newest one cannot
 * be read): nothing is pruned. A file is read only when its last write was
 * before the period or after that time (a clock that is not the file
 * system's).
 */
export function retentionScan(
  area: StateArea,
  dir: string,
  name: RegExp,
  recordedAt: (file: string) => string | null,
  now: Date,
): {at: Date; files: string[]} | null {
  const files: Array<{file: string; mtime: number}> = [];
  for (const e of listDir(area.guard, dir)) {
    if (!e.isFile() || !name.test(e.name)) continue;
    const file = path.join(dir, e.name);
    try {
      files.push({file, mtime: fs.statSync(file).mtimeMs});
    } catch (error) {
      rethrowUnless(error, isSystemError);
      // Removed meanwhile.
    }
  }
  if (files.length === 0) return null;
  const newest = files.reduce((a, b) => (b.mtime > a.mtime ? b : a));
  let recorded = Number.NaN;
  try {
    recorded = Date.parse(recordedAt(newest.file) ?? '');
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    // Unreadable: left for a person to look at, and nothing judged by it.
  }
  if (!Number.isFinite(recorded)) return null;
  const at = Math.min(now.getTime(), recorded);
  return {at: new Date(at), files: files.filter((f) => f.mtime < at - PERIOD_MS || f.mtime > at).map((f) => f.file)};
}
