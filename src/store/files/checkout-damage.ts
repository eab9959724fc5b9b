import {AutoctxError, isAutoctxError, isSystemError, rethrowUnless} from '../../errors.js';
import {readBytes} from './guarded-reads.js';
import type {RootGuard} from './root-guard.js';
import {CONFLICT_WAY_OUT} from '../../model/common/divergence-advice.js';

/**
 * What a git checkout or an unfinished merge does to a file autoctx wrote, told apart from an edit: every reader
 * names it with one code and the way out, never as tampering.
 *
 * - LINE_ENDINGS: the file has CRLF line endings and no bare LF (git's `core.autocrlf=true` converts every LF of a
 *   file it takes for text on checkout). autoctx writes no raw CR in a JSON document, and its other files are
 *   checked against bytes it knows: a reader that finds a fault in such a file reports this instead.
 * - MERGE_CONFLICT: the file holds git's conflict markers (a line starting `<<<<<<< ` and one starting `>>>>>>> `).
 */

const CR = 0x0d;
const LF = 0x0a;

/** True when `bytes` hold CRLF line endings and every LF is one's. */
export function hasConvertedLineEndings(bytes: Uint8Array): boolean {
  let lf = 0;
  for (let at = bytes.indexOf(LF); at >= 0; at = bytes.indexOf(LF, at + 1)) {
    if (at === 0 || bytes[at - 1] !== CR) return false;
    lf++;
  }
  return lf > 0;
}

/** True when `bytes` hold a CR at all (the cheap test every document read makes). */
export function hasCarriageReturn(bytes: Uint8Array): boolean {
  return (
    (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).indexOf(CR) >= 0
  );
}

/** `bytes` with each CRLF made LF. */
export function withLfEndings(bytes: Uint8Array): Buffer {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Buffer.from(b.toString('latin1').replaceAll('\r\n', '\n'), 'latin1');
}

const OURS = Buffer.from('<<<<<<< ');
const THEIRS = Buffer.from('>>>>>>> ');

/** True when a line of `bytes` starts with `marker`. */
function lineStarts(bytes: Buffer, marker: Buffer): boolean {
  for (let at = bytes.indexOf(marker); at >= 0; at = bytes.indexOf(marker, at + 1))
    if (at === 0 || bytes[at - 1] === LF) return true;
  return false;
}

/** True when `bytes` hold git's conflict markers. */
export function hasConflictMarkers(bytes: Uint8Array): boolean {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return lineStarts(b, OURS) && lineStarts(b, THEIRS);
}

export function lineEndingsError(rel: string): AutoctxError {
  return new AutoctxError(
    'LINE_ENDINGS',
    `${rel} was checked out with its line endings converted (CRLF for LF, as git's core.autocrlf=true ` +
      `does): autoctx's files are byte-exact; fix the checkout (git config core.autocrlf false, then git ` +
      `checkout -- <the knowledge folder>, which drops uncommitted changes there), and commit the ` +
      `.gitattributes autoctx repair writes so no clone converts them again`,
    {file: rel},
  );
}

export function mergeConflictError(rel: string): AutoctxError {
  return new AutoctxError(
    'MERGE_CONFLICT',
    `${rel} holds git conflict markers (<<<<<<< … >>>>>>>): a merge was left unfinished; ` + CONFLICT_WAY_OUT,
    {file: rel},
  );
}

/** The error that names what a checkout or a merge did to `bytes`, or null when it did neither. */
export function checkoutDamage(bytes: Uint8Array, rel: string): AutoctxError | null {
  if (hasConflictMarkers(bytes)) return mergeConflictError(rel);
  if (hasConvertedLineEndings(bytes)) return lineEndingsError(rel);
  return null;
}

/** checkoutDamage of a file of the tree; null for a file that is missing or cannot be read as one. */
export function checkoutDamageOf(guard: RootGuard, file: string): AutoctxError | null {
  try {
    const bytes = readBytes(guard, file);
    return bytes === null ? null : checkoutDamage(bytes, guard.relative(file));
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError); // a folder, a link out of the root: not a checkout's doing
    return null;
  }
}
