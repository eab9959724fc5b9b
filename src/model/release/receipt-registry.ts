import {jsonEqual} from '../../canonical/index.js';
import {emptyRegistry, GLOBAL_SCOPE, versionKey, type Registry, type TransitionReceipt} from './release.js';

/**
 * The registry an applied receipt carries is what its declared change makes
 * of the registry before it, and nothing else. A transition changes its own
 * version (to its target state; in the global scope ACTIVE leaves the
 * registry, read from active.json), makes the versions it names deprecated
 * DEPRECATED, and in the global scope may bring served releases in line
 * (removed, or DEPRECATED); a runnable-set change changes the runnable set
 * only; a rollback receipt is a transition to ACTIVE. The new settings of the
 * version itself (canary share, shadow share and cap) are declared by the
 * registry alone. Pure; the problem, or null.
 */
export function receiptRegistryProblem(before: Registry | null, r: TransitionReceipt): string | null {
  const after = r.registry;
  if (!r.applied || after === null) return null;
  const prior = before ?? emptyRegistry(r.scenario, r.scope);
  const keys = [...new Set([...Object.keys(prior.releases), ...Object.keys(after.releases)])].sort();
  const changed = keys.filter((k) => !jsonEqual(prior.releases[k] ?? null, after.releases[k] ?? null));
  const what =
    r.action === 'runnable'
      ? 'a runnable-set change'
      : `a ${r.action} of ${r.version ?? '?'} to ${r.target_state ?? '?'}`;
  const change = (k: string) =>
    `${k} (${prior.releases[k]?.state ?? 'absent'} → ${after.releases[k]?.state ?? 'absent'})`;
  if (after.scenario !== prior.scenario || after.scope !== prior.scope)
    return `it declares ${what} in scope ${r.scope}, but carries the registry of ${after.scenario}/${after.scope}`;
  if (r.action === 'runnable')
    return changed.length > 0
      ? `it declares ${what}, but the registry it carries also changes ${changed.map(change).join(', ')}`
      : null;
  if (!jsonEqual(prior.runnable, after.runnable))
    return `it declares ${what}, but the registry it carries also changes the runnable set`;
  if (r.version === null || r.target_state === null)
    return `it is an applied ${r.action} that names no version or target state`;
  const own = versionKey(r.version);
  const deprecated = new Set(r.deprecated_versions.map(versionKey));
  const plain = (k: string, state: string) => {
    const a = after.releases[k];
    return a !== undefined && a.state === state && a.canary === null && a.shadow === null;
  };
  for (const k of changed) {
    const a = after.releases[k];
    if (k === own) {
      if (r.target_state === 'ACTIVE' && r.scope === GLOBAL_SCOPE) {
        if (a !== undefined)
          return (
            `it declares ${what}, but the registry it carries keeps ${change(k)} (the global ACTIVE is read ` +
            `from active.json)`
          );
        continue;
      }
      const settingsFit =
        a !== undefined &&
        a.state === r.target_state &&
        (a.canary !== null) === (r.target_state === 'CANARY') &&
        (a.shadow !== null) === (r.target_state === 'SHADOW');
      if (!settingsFit) return `it declares ${what}, but the registry it carries makes ${change(k)}`;
      continue;
    }
    if (deprecated.has(k) && plain(k, 'DEPRECATED')) continue;
    // The global scope brings a served release in line: removed (it is the active one) or DEPRECATED, never anything
    // that serves more.
    if (r.scope === GLOBAL_SCOPE && (a === undefined || plain(k, 'DEPRECATED'))) continue;
    return `it declares ${what}, but the registry it carries also changes ${change(k)}`;
  }
  return null;
}
