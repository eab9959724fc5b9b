import {GLOBAL_SCOPE, versionKey, type TransitionReceipt} from '../release/release.js';

/**
 * "Has served": the one definition every rollback condition, descriptor
 * check and verify uses. In the global scope a bundle has served when a move
 * on the pointer's recorded history (`chain`: the moves that served, oldest
 * first, what serves now included) made it active. In another scope a
 * release has served when an applied receipt of that scope (not a change of
 * the runnable set) made it ACTIVE there. "Served before" a point is the
 * same question asked of the history up to that point (a prefix of the chain
 * or of the receipts). Pure.
 */
export interface ServedFacts {
  /** The global pointer's history: the bundle each move made active. */
  chain: readonly {to: string}[];
  /** The scope's receipts, oldest first (undefined where one did not read back). */
  receipts: readonly (TransitionReceipt | undefined)[];
}

/** Whether a receipt made `version` ACTIVE in its scope. */
export function madeActive(r: TransitionReceipt | undefined, version: string): boolean {
  return (
    r !== undefined &&
    r.applied &&
    r.action !== 'runnable' &&
    r.target_state === 'ACTIVE' &&
    r.version !== null &&
    versionKey(r.version) === versionKey(version)
  );
}

export function hasServed(
  scope: string,
  target: {version: string | null; bundle_digest: string},
  facts: ServedFacts,
): boolean {
  if (scope === GLOBAL_SCOPE) return facts.chain.some((m) => m.to === target.bundle_digest);
  const version = target.version;
  return version !== null && facts.receipts.some((r) => madeActive(r, version));
}
