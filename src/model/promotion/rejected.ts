/**
 * The one definition of "rejected": a bundle whose candidate record is
 * rejected, or that has a negative result, or a stale rejection (a promotion
 * found its incumbent replaced) must never serve. Every reader of what serves
 * (routing, delivery, shadow sampling, rollback) and verify decide with this
 * function, from the three facts each reads in its own way. Pure.
 */
export interface RejectionFacts {
  /** The candidate record's lifecycle (null: no record). */
  lifecycle: string | null;
  hasNegativeResult: boolean;
  hasStaleRejection: boolean;
}

/** Why the bundle must never serve, or null when it is not rejected. */
export function rejectionReason(digest: string, facts: RejectionFacts): string | null {
  if (facts.lifecycle === 'rejected') return `candidate ${digest} is rejected`;
  if (facts.hasNegativeResult) return `candidate ${digest} has a negative result`;
  if (facts.hasStaleRejection) return `candidate ${digest} was rejected as stale`;
  return null;
}
