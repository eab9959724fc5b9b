/** Where a bundle stands. Lifecycle lives outside the bundle, so digests never change with state. */
export const LIFECYCLES = ['proposed', 'screened', 'confirmed', 'active', 'rejected', 'superseded'] as const;
export type Lifecycle = (typeof LIFECYCLES)[number];

/**
 * Every transition the reference implements, including the ones its diagram
 * leaves out: screened→rejected (terminal inconclusive), confirmed→rejected
 * (campaign gate blocked or stale parent) and superseded→active (rollback).
 */
export const TRANSITIONS: Readonly<Record<Lifecycle, readonly Lifecycle[]>> = {
  proposed: ['screened', 'confirmed', 'rejected'],
  screened: ['screened', 'confirmed', 'rejected'],
  confirmed: ['active', 'rejected'],
  active: ['superseded'],
  rejected: [],
  superseded: ['active'],
};

export function canTransition(from: Lifecycle, to: Lifecycle): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Lifecycles from which a candidate may still be evaluated or promoted. */
export const PENDING_LIFECYCLES: readonly Lifecycle[] = ['proposed', 'screened', 'confirmed'];
