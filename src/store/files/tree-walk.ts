import fs from 'node:fs';
import path from 'node:path';
import type {RootGuard} from './root-guard.js';

export interface TreeEntry {
  path: string;
  kind: 'file' | 'dir' | 'symlink' | 'other';
}

/**
 * Every entry below dir (not following links), depth first, sorted; `listings` receives each folder's sorted entries.
 */
export function walkTree(guard: RootGuard, dir: string, listings?: Map<string, fs.Dirent[]>): TreeEntry[] {
  guard.check(dir);
  const out: TreeEntry[] = [];
  const visit = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, {withFileTypes: true});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    listings?.set(d, entries);
    for (const e of entries) {
      const p = `${d}${path.sep}${e.name}`;
      if (e.isSymbolicLink()) out.push({path: p, kind: 'symlink'});
      else if (e.isDirectory()) {
        out.push({path: p, kind: 'dir'});
        visit(p);
      } else if (e.isFile()) out.push({path: p, kind: 'file'});
      else out.push({path: p, kind: 'other'});
    }
  };
  visit(dir);
  return out;
}
