import path from 'node:path';

/** Names autoctx leaves behind transiently: temp files and locks. The one place these patterns live. */
export const TEMP_FILE = /\.autoctx-[0-9a-z]+\.tmp$/;
/** A lock (a file; a folder for locks an older autoctx took). */
export const LOCK_NAME = /^autoctx\.lock$/;
/**
 * A lock moved aside by a takeover or a release whose process died before removing it, or an owner file prepared by a
 * process that died before publishing it.
 */
export const STALE_LOCK_NAME = /^autoctx\.lock\.(stale-[0-9a-z]+|owner-[0-9a-f]+\.tmp)$/;
/** The temporary file the Python implementation's atomic writer leaves (<name>.<pid>.<hex>.tmp). */
const UPSTREAM_TEMP_FILE = /\.\d+\.[0-9a-f]{32}\.tmp$/;
/** The file names of the discoverable negative-result copies autoctx writes. */
const NEGATIVE_LEDGER_FILE = /^context-bundle-[0-9a-f]{64}\.json$/;

/** What a name left in a store is: a temporary file (ours, upstream's, or another *.tmp), a lock, or neither. */
export function leftoverKind(
  file: string,
  kind: 'file' | 'dir',
): 'temp' | 'upstream-temp' | 'other-temp' | 'lock' | 'stale-lock' | null {
  const name = path.basename(file);
  if (STALE_LOCK_NAME.test(name)) return 'stale-lock';
  if (LOCK_NAME.test(name)) return 'lock';
  if (kind === 'file' && TEMP_FILE.test(name)) return 'temp';
  if (kind === 'file' && UPSTREAM_TEMP_FILE.test(name)) return 'upstream-temp';
  if (kind === 'file' && name.endsWith('.tmp')) return 'other-temp';
  return null;
}

/**
 * True for a file in negative_result_ledgers/ that autoctx itself names (others are upstream's or a person's, read as
 * ledgers).
 */
export function isOwnNegativeLedgerName(name: string): boolean {
  return NEGATIVE_LEDGER_FILE.test(name);
}

export function tempPath(target: string, nonce: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.autoctx-${nonce}.tmp`);
}
