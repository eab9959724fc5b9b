import {stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';

/** How much matched evidence a comparison needs, and at what confidence. */
export interface ConfirmationPolicy {
  min_screen_pairs: number;
  min_confirmation_pairs: number;
  max_confirmation_pairs: number;
  min_heldout_pairs: number;
  min_effect: number;
  confidence_z: number;
}

export const DEFAULT_CONFIRMATION_POLICY: Readonly<ConfirmationPolicy> = Object.freeze({
  min_screen_pairs: 2,
  min_confirmation_pairs: 6,
  max_confirmation_pairs: 20,
  min_heldout_pairs: 2,
  min_effect: 0.0,
  confidence_z: 1.96,
});

/**
 * The defaults of a plan bound from now on when no policy (or a partial one)
 * is given. The reference's defaults above stay what replays, migration and
 * the library use; these differ in the two lanes that reject on a plain mean
 * ("> min_effect"), the screen and the held-out lane, sized from the screen
 * rows of `autoctx calibrate` (docs/statistics.md): a candidate whose true
 * effect is +0.5 standard deviations of the per-pair difference passes each
 * at least 95% of the time, with continuous scores and with discrete ones
 * that tie.
 */
export const NEW_PLAN_CONFIRMATION_POLICY: Readonly<ConfirmationPolicy> = Object.freeze({
  ...DEFAULT_CONFIRMATION_POLICY,
  min_screen_pairs: 16,
  min_heldout_pairs: 16,
});

const POLICY_KEYS = Object.keys(DEFAULT_CONFIRMATION_POLICY).sort();

/** Validate a policy object strictly (unknown keys are errors), as the reference's constructor does. */
export function validateConfirmationPolicy(value: unknown): ConfirmationPolicy {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('SCHEMA_VIOLATION', 'confirmation policy must be an object');
  const p = value as Record<string, unknown>;
  const extra = Object.keys(p).filter((k) => !POLICY_KEYS.includes(k));
  if (extra.length > 0) fail('SCHEMA_VIOLATION', `confirmation policy has unknown keys: ${extra.join(', ')}`);
  const missing = POLICY_KEYS.filter((k) => !(k in p));
  if (missing.length > 0) fail('SCHEMA_VIOLATION', `confirmation policy lacks: ${missing.join(', ')}`);
  const int = (k: string, min: number) => {
    const v = p[k];
    if (typeof v !== 'number' || !Number.isSafeInteger(v))
      fail('SCHEMA_VIOLATION', `confirmation policy ${k} must be an integer`);
    if (v < min) fail('SCHEMA_VIOLATION', `confirmation policy ${k} must be at least ${min}`);
    return v;
  };
  const policy: ConfirmationPolicy = {
    min_screen_pairs: int('min_screen_pairs', 1),
    min_confirmation_pairs: int('min_confirmation_pairs', 2),
    max_confirmation_pairs: int('max_confirmation_pairs', 2),
    min_heldout_pairs: int('min_heldout_pairs', 1),
    min_effect: p.min_effect as number,
    confidence_z: p.confidence_z as number,
  };
  if (policy.max_confirmation_pairs < policy.min_confirmation_pairs) {
    fail('SCHEMA_VIOLATION', 'confirmation policy max_confirmation_pairs must be at least min_confirmation_pairs');
  }
  if (typeof policy.min_effect !== 'number' || !Number.isFinite(policy.min_effect))
    fail('SCHEMA_VIOLATION', 'confirmation policy min_effect must be finite');
  if (typeof policy.confidence_z !== 'number' || !Number.isFinite(policy.confidence_z) || policy.confidence_z <= 0) {
    fail('SCHEMA_VIOLATION', 'confirmation policy confidence_z must be finite and positive');
  }
  return policy;
}

export function confirmationPolicyDigest(policy: ConfirmationPolicy): string {
  return stableDigest(policy);
}
