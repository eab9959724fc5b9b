import {paint} from './style.js';

interface Shown {
  status: string;
  content: string | null;
  content_bytes: number;
  items: ReadonlyArray<{truncated: boolean}>;
  truncated: boolean;
  omitted: number;
  routing?: {bundle_digest: string; version: string | null; state: string; reason: string} | null;
}

/**
 * The human answer of render, prepare and recall: the package text itself, then one line of counts (stderr-free: pipe
 * it).
 */
export function packageSummary(r: Shown): string[] {
  const counts =
    `${r.items.length} item${r.items.length === 1 ? '' : 's'}, ${r.content_bytes} ` +
    `bytes${r.omitted > 0 ? `, ${r.omitted} omitted` : ''}${r.truncated ? ', truncated' : ''}`;
  const from = r.routing
    ? `, from ${r.routing.version ?? r.routing.bundle_digest.slice(0, 12)} ` +
      `(${r.routing.state}${r.routing.reason === 'pinned' ? ', pinned' : ''})`
    : '';
  if (r.content === null) return [paint.dim(`${r.status}: no package (${counts}${from})`)];
  return [r.content, '', paint.dim(`${r.status}: ${counts}${from}`)];
}
