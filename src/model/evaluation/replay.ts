import type {ComparisonResult} from '../promotion/records.js';

const f64 = new Float64Array(1);
const i64 = new BigInt64Array(f64.buffer);

/** Distance in units in the last place between two finite doubles (0 when equal). */
export function ulpDistance(a: number, b: number): number {
  if (Object.is(a, b) || a === b) return 0;
  f64[0] = a;
  let x = i64[0]!;
  f64[0] = b;
  let y = i64[0]!;
  // Map the sign-magnitude bit patterns onto a line of integers.
  if (x < 0n) x = -0x8000000000000000n - x;
  if (y < 0n) y = -0x8000000000000000n - y;
  const d = x > y ? x - y : y - x;
  return Number(d);
}

export const REPLAY_MAX_ULP = 16;
export const REPLAY_MAX_RELATIVE = 1e-12;

export interface ReplayCheck {
  field: keyof ComparisonResult;
  recorded: unknown;
  replayed: unknown;
  exact: boolean;
  ulp?: number;
  relative_to_half_width?: number;
}

export interface ReplayVerdict {
  matches: boolean;
  bit_exact: boolean;
  max_ulp: number;
  max_relative_to_half_width: number;
  fields: ReplayCheck[];
}

/**
 * The replay contract: decision, reason, counts and mean must be equal
 * exactly; confidence bounds exactly, or for a record written by another
 * runtime within 16 ULP or within 1e-12 of the half-width. The verdict says
 * whether it is bit exact and the largest distance found.
 */
export function compareReplay(recorded: ComparisonResult, replayed: ComparisonResult): ReplayVerdict {
  const fields: ReplayCheck[] = [];
  let ok = true;
  let maxUlp = 0;
  let maxRel = 0;
  for (const field of [
    'decision',
    'reason',
    'screen_pairs',
    'confirmation_pairs',
    'heldout_pairs',
    'mean_effect',
  ] as const) {
    const exact = Object.is(recorded[field], replayed[field]) || recorded[field] === replayed[field];
    if (!exact) ok = false;
    fields.push({field, recorded: recorded[field], replayed: replayed[field], exact});
  }
  const halfWidth =
    replayed.confidence_low !== null && replayed.confidence_high !== null
      ? Math.abs(replayed.confidence_high - replayed.confidence_low) / 2
      : 0;
  for (const field of ['confidence_low', 'confidence_high'] as const) {
    const a = recorded[field];
    const b = replayed[field];
    const exact = a === b;
    const check: ReplayCheck = {field, recorded: a, replayed: b, exact};
    if (!exact) {
      if (a === null || b === null || !Number.isFinite(a) || !Number.isFinite(b)) ok = false;
      else {
        const ulp = ulpDistance(a, b);
        const rel = halfWidth > 0 ? Math.abs(a - b) / halfWidth : Number.POSITIVE_INFINITY;
        check.ulp = ulp;
        check.relative_to_half_width = rel;
        maxUlp = Math.max(maxUlp, ulp);
        maxRel = Math.max(maxRel, rel);
        if (!(ulp <= REPLAY_MAX_ULP || rel <= REPLAY_MAX_RELATIVE)) ok = false;
      }
    }
    fields.push(check);
  }
  return {
    matches: ok,
    bit_exact: fields.every((f) => f.exact),
    max_ulp: maxUlp,
    max_relative_to_half_width: maxRel,
    fields,
  };
}
