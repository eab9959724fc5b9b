import {stableDigest} from '../../canonical/index.js';
import {bucketOf} from '../release/routing.js';

/**
 * Delivery evidence packages (spec 003, "Sealed evidence sampling and
 * retention"; ARCHITECTURE §12): what a model was actually given, sealed in
 * the state area with an integrity digest, sampled and retained by these
 * rules. Pure.
 */
export const PACKAGE_SCHEMA_ID = 'autoctx.evidence-package.v1';
/** The layout autoctx's own hooks and `bootstrap render` draw: the cited, quoted bootstrap package. */
export const BOOTSTRAP_LAYOUT = 'autoctx-bootstrap-v1';
/** A layout whose every present component of the checked kinds is delivered verbatim. */
export const COMPONENTS_LAYOUT = 'autoctx-components-v1';

/** The largest prompt a package may hold, each of system and user (bytes of UTF-8). */
export const MAX_PROMPT_BYTES = 1_048_576;

export interface PackageInput {
  schema: typeof PACKAGE_SCHEMA_ID;
  scenario: string;
  correlation_id: string;
  bundle_digest: string;
  release_version?: string;
  layout?: string;
  system_prompt: string;
  user_prompt: string;
  metadata?: Record<string, unknown>;
}

export interface EvidencePackage {
  schema_version: 1;
  package_id: string;
  source: 'seal' | 'hook';
  sealed_at: string;
  /** The input as given (for a hook: the exact context injected, and the delivery receipt as metadata). */
  package: PackageInput;
  /** SHA-256 of the canonical JSON of everything above: re-checked on every read. */
  digest: string;
}

export function packageDigest(p: Omit<EvidencePackage, 'digest'> & {digest?: string}): string {
  const {digest: _d, ...rest} = p;
  return stableDigest(rest);
}

/**
 * A package's id: derived from what it holds, so that one delivery sealed twice (a re-run after a crash) is one
 * package.
 */
export function packageId(input: PackageInput): string {
  return stableDigest({
    correlation_id: input.correlation_id,
    scenario: input.scenario,
    input: stableDigest(input),
  }).slice(0, 32);
}

export const SAMPLING_ALGORITHM = 'autoctx-evidence-v1';

export interface SamplingSettings {
  /** Every delivery is sealed for this many after the bundle active.json names changes. */
  window: number;
  /** Then this share, in whole percent (1–100), by stable hash of the correlation id. */
  percent: number;
}

export const DEFAULT_SAMPLING: SamplingSettings = {window: 1000, percent: 1};

export interface SamplingState {
  schema_version: 1;
  scenario: string;
  /** The bundle active.json named when the window began. */
  active_digest: string;
  /** Deliveries decided since then. */
  since_change: number;
}

/**
 * Whether this delivery is sealed, and the state after it. Integer arithmetic; the hash is routing's bucket (0–9,999).
 */
export function sampleDelivery(
  state: SamplingState | null,
  scenario: string,
  activeDigest: string,
  correlationId: string,
  s: SamplingSettings,
): {sealed: boolean; reason: 'window' | 'percent' | 'not_sampled'; next: SamplingState} {
  const since = state && state.active_digest === activeDigest ? state.since_change : 0;
  const next: SamplingState = {schema_version: 1, scenario, active_digest: activeDigest, since_change: since + 1};
  if (since < s.window) return {sealed: true, reason: 'window', next};
  const bucket = bucketOf(SAMPLING_ALGORITHM, [scenario, correlationId]);
  return bucket < s.percent * 100
    ? {sealed: true, reason: 'percent', next}
    : {sealed: false, reason: 'not_sampled', next};
}

/** Whether the inspector looks at a package at all (by stable hash of its id, default 100%). */
export function inspectionSampled(packageIdValue: string, percent: number): boolean {
  return bucketOf('autoctx-inspection-v1', [packageIdValue]) < percent * 100;
}

export const RETENTION_DAYS = 90;
export const CLEAN_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;

/** When a package may be pruned: 90 days after it was sealed, 30 when its latest inspection was PASS. */
export function expiresAt(sealedAt: string, latestVerdict: string | null): number {
  return Date.parse(sealedAt) + (latestVerdict === 'PASS' ? CLEAN_RETENTION_DAYS : RETENTION_DAYS) * DAY_MS;
}
