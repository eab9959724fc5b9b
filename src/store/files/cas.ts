import {parseJsonUtf8, stableDigest} from '../../canonical/index.js';
import {AutoctxError, fail, isAutoctxError} from '../../errors.js';
import {withBytes} from './fs.js';
import type {LockedWriter} from './locked-writer.js';
import type {SchemaName} from '../schemas.js';

/**
 * The digest a compare-and-swap compares: the canonical digest of the document
 * as stored, or null when absent. A stored file that is not JSON is
 * CORRUPT_FILE (exit 8) naming it, as any stored document's reader says.
 */
export function documentDigest(writer: LockedWriter, file: string): string | null {
  const rel = writer.guard.relative(file);
  try {
    return withBytes(writer.guard, file, (bytes) => stableDigest(parseJsonUtf8(bytes)));
  } catch (error) {
    if (!isAutoctxError(error) || error.code === 'UNSAFE_PATH') throw error;
    throw new AutoctxError('CORRUPT_FILE', `${rel}: ${error.message}`, {file: rel, reason: error.code});
  }
}

/**
 * Compare-and-swap of a mutable document: under its lock, replace `file` with
 * `next` only if the document stored now has the digest `expected` (null: the
 * file must not exist yet). A document that moved is CAS_LOST (exit 6), and
 * nothing is written. The active pointer moves this way; so will the release
 * registry. `onLost` may raise a more precise error of the same exit code.
 */
export function compareAndSwap(
  writer: LockedWriter,
  file: string,
  schema: SchemaName,
  expected: string | null,
  next: unknown,
  onLost?: (current: string | null) => never,
): void {
  const current = documentDigest(writer, file);
  if (current !== expected) {
    if (onLost) onLost(current);
    fail(
      'CAS_LOST',
      `${writer.guard.relative(file)} moved: expected ${expected ?? 'no document'}, found ` +
        `${current ?? 'none'}; nothing was written`,
      {file: writer.guard.relative(file), expected, found: current},
    );
  }
  writer.replaceDocument(file, schema, next);
}
