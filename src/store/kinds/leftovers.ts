import type {Findings} from '../findings.js';
import {leftoverKind} from '../paths.js';

/** verify: links (one out of the root is an error), temporary files and lock folders left in the scenario folder. */
export function verifyLeftovers(c: Findings): void {
  const {store} = c;
  for (const entry of c.entries()) {
    if (entry.kind === 'symlink') {
      if (store.linkStaysInside(entry.path)) c.warn(entry.path, 'SYMLINK', `${c.rel(entry.path)} is a symbolic link; autoctx never writes links`);
      else c.error(entry.path, 'UNSAFE_PATH', `${c.rel(entry.path)} is a symbolic link that leads outside the knowledge root`);
      continue;
    }
    if (entry.kind !== 'file' && entry.kind !== 'dir') continue;
    const kind = leftoverKind(entry.path, entry.kind);
    if (kind === 'temp' || kind === 'upstream-temp' || kind === 'other-temp') c.warn(entry.path, 'LEFTOVER_TEMP', `${c.rel(entry.path)} is a temporary file left by an interrupted write; it can be removed`);
    else if (kind === 'lock' || kind === 'stale-lock') c.warn(entry.path, 'LEFTOVER_LOCK', `${c.rel(entry.path)} is a lock left behind or still held; the next writer takes it over if its owner is gone`);
  }
}
