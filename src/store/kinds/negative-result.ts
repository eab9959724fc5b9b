import {readDocument} from '../documents.js';
import type {KindContext} from './context.js';
import {jsonEqual} from '../../canonical/index.js';
import type {Findings} from '../findings.js';

/**
 * candidates/<digest>/negative_result.json and its discoverable copy in
 * negative_result_ledgers/: immutable, equal to each other.
 */
export const NEGATIVE_SCHEMA = 'negative-result' as const;

export function readNegativeResult(ctx: KindContext, digest: string): Record<string, unknown> | null {
  return readDocument<Record<string, unknown>>(ctx.guard, ctx.paths.negativeResult(digest), NEGATIVE_SCHEMA);
}

export function readNegativeLedgerCopy(ctx: KindContext, digest: string): Record<string, unknown> | null {
  return readDocument<Record<string, unknown>>(ctx.guard, ctx.paths.negativeLedger(digest), NEGATIVE_SCHEMA);
}

/**
 * Write negative_result.json once (an existing one is kept: it is immutable and
 * its timestamps would differ) and its discoverable copy, equal to it.
 */
export function writeNegativeResult(ctx: KindContext, digest: string, doc: Record<string, unknown>): Record<string, unknown> {
  const existing = readNegativeResult(ctx, digest);
  const kept = existing ?? doc;
  if (!existing) ctx.writer.createDocument(ctx.paths.negativeResult(digest), NEGATIVE_SCHEMA, kept);
  ctx.writer.createDocument(ctx.paths.negativeLedger(digest), NEGATIVE_SCHEMA, kept);
  return kept;
}

/** verify: a negative result and its discoverable copy are equal, and neither exists without the other (a missing copy is repairable). */
export function verifyNegativeResult(c: Findings, digest: string): void {
  const {store} = c;
  const file = store.paths.negativeResult(digest);
  const neg = c.attempt(file, () => readNegativeResult(store, digest));
  const copyFile = store.paths.negativeLedger(digest);
  const copy = c.attempt(copyFile, () => readNegativeLedgerCopy(store, digest));
  if (neg && copy === null) c.warn(copyFile, 'MISSING_LEDGER_COPY', `${c.rel(copyFile)}: the discoverable copy of ${c.rel(file)} is missing`);
  if (neg && copy && !jsonEqual(neg, copy)) {
    c.error(copyFile, 'LEDGER_MISMATCH', `${c.rel(copyFile)} differs from ${c.rel(file)}`);
    c.error(file, 'LEDGER_MISMATCH', `${c.rel(file)} differs from its copy ${c.rel(copyFile)}`);
  }
  if (!neg && copy) c.error(copyFile, 'LEDGER_MISMATCH', `${c.rel(copyFile)} has no negative_result.json beside its candidate`);
}

/** verify: ledgers in negative_result_ledgers/ under names autoctx does not write (upstream's or a person's) must still be valid ledgers. */
export function verifyForeignLedgers(c: Findings): void {
  for (const e of c.entries()) {
    if (e.kind === 'file' && c.store.paths.isForeignNegativeLedger(e.path)) c.attempt(e.path, () => c.store.readDocumentAt(e.path, NEGATIVE_SCHEMA));
  }
}
