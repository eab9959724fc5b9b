import type {Findings} from '../../findings.js';
import {leftoverKind} from '../../paths.js';
import {exists} from '../../files/fs.js';
import type {ScenarioRepair} from './kind-steps.js';

/** verify: links (one out of the root is an error), temporary files and lock folders left in the scenario folder. */
export function verifyLeftovers(c: Findings): void {
  const {store} = c;
  for (const entry of c.entries()) {
    if (entry.kind === 'symlink') {
      if (store.linkStaysInside(entry.path))
        c.warn(entry.path, 'SYMLINK', `${c.rel(entry.path)} is a symbolic link; autoctx never writes links`);
      else
        c.error(
          entry.path,
          'UNSAFE_PATH',
          `${c.rel(entry.path)} is a symbolic link that leads outside the knowledge root`,
        );
      continue;
    }
    if (entry.kind !== 'file' && entry.kind !== 'dir') continue;
    const kind = leftoverKind(entry.path, entry.kind);
    if (kind === 'temp' || kind === 'upstream-temp' || kind === 'other-temp')
      c.warn(
        entry.path,
        'LEFTOVER_TEMP',
        `${c.rel(entry.path)} is a temporary file left by an interrupted write; it can be removed`,
      );
    else if (kind === 'lock' || kind === 'stale-lock')
      c.warn(
        entry.path,
        'LEFTOVER_LOCK',
        `${c.rel(entry.path)} is a lock left behind or still held; the next writer takes it over if its owner is gone`,
      );
    else if (entry.kind === 'file' && entry.path.endsWith('.sig') && !exists(entry.path.slice(0, -4)))
      c.warn(
        entry.path,
        'ORPHAN_SIGNATURE',
        `${c.rel(entry.path)} signs a record that is not there (a write cut short after the signature, ` +
          `before its record); it can be removed`,
      );
  }
}

/** repair: temporary files, dead lock folders, signatures whose record a crash cut short, locks of owners that died. */
export const leftoversRepair: ScenarioRepair = {
  order: 100,
  repair({store, rel, actions}) {
    for (const entry of store.walk()) {
      const leftover = entry.kind === 'file' || entry.kind === 'dir' ? leftoverKind(entry.path, entry.kind) : null;
      if (leftover === 'temp' || leftover === 'upstream-temp' || leftover === 'stale-lock') {
        store.writer.remove(entry.path);
        actions.push(`removed ${rel(entry.path)}`);
      } else if (entry.kind === 'file' && entry.path.endsWith('.sig') && !exists(entry.path.slice(0, -4))) {
        store.writer.remove(entry.path);
        actions.push(`removed ${rel(entry.path)}, a signature whose record a crash cut short`);
      } else if (leftover === 'lock' && store.removeAbandonedLock(entry.path)) {
        actions.push(`removed ${rel(entry.path)}, a lock its owner left when it died`);
      }
    }
  },
};
