import {stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';

/**
 * Releases (spec 003 on context bundles, ARCHITECTURE §12): the state
 * vocabulary, its alias table, version names and scopes, and the transition
 * table the gate follows. Pure.
 */
export const RELEASE_STATES = ['DRAFT', 'SHADOW', 'CANARY', 'ACTIVE', 'DEPRECATED', 'RETIRED'] as const;
export type ReleaseState = (typeof RELEASE_STATES)[number];

/**
 * Older names, accepted on input only (stored documents hold canonical
 * names; any other stored value is an integrity error). An unknown name is
 * refused, never mapped to ACTIVE.
 */
export const STATE_ALIASES: Readonly<Record<string, ReleaseState>> = {
  EVAL_ONLY: 'SHADOW',
  PRODUCTION: 'ACTIVE',
  ACTIVE_FOR_SCOPE: 'ACTIVE',
  RELEASED: 'ACTIVE',
  RUNTIME_APPROVED: 'ACTIVE',
  PRODUCTION_APPROVED: 'ACTIVE',
  ROLLED_BACK: 'DEPRECATED',
};

export function isReleaseState(value: unknown): value is ReleaseState {
  return typeof value === 'string' && (RELEASE_STATES as readonly string[]).includes(value);
}

/** A state as given on input (any case, canonical or alias) → its canonical name, or null. */
export function canonicalState(input: string): ReleaseState | null {
  const name = input.trim().toUpperCase();
  if (isReleaseState(name)) return name;
  return STATE_ALIASES[name] ?? null;
}

/**
 * The transition table (reference C.4), plus a transition to the current
 * state for the two states that carry settings (a wider canary share, new
 * filters, new shadow settings). DEPRECATED→ACTIVE is a rollback's alone.
 */
export const TRANSITIONS: Readonly<Record<ReleaseState, readonly ReleaseState[]>> = {
  DRAFT: ['SHADOW', 'RETIRED'],
  SHADOW: ['SHADOW', 'CANARY', 'DRAFT', 'RETIRED'],
  CANARY: ['CANARY', 'ACTIVE', 'SHADOW', 'DEPRECATED'],
  ACTIVE: ['DEPRECATED'],
  DEPRECATED: ['RETIRED'],
  RETIRED: [],
};

export function transitionAllowed(from: ReleaseState, to: ReleaseState): boolean {
  return TRANSITIONS[from].includes(to);
}

const VERSION = /^[A-Za-z0-9._-]{1,64}$/;

/** What is wrong with a version name, or null: [A-Za-z0-9._-], 1–64 characters, not only dots, not "unnamed". */
export function versionNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'it is empty';
  if (!VERSION.test(name)) return 'a version name uses only A-Z, a-z, 0-9, ".", "_" and "-", at most 64 characters';
  if (/^\.+$/.test(name)) return 'it is only dots';
  if (name.toLowerCase() === 'unnamed') return '"unnamed" is what status shows for an active bundle no release names';
  return null;
}

export function assertVersionName(name: string, what = 'version'): void {
  const problem = versionNameProblem(name);
  if (problem) fail('INVALID_NAME', `invalid ${what} name ${JSON.stringify(name)}: ${problem}`, {version: name});
}

/** Version names are compared case-insensitively (think of case-insensitive file systems): this is the key. */
export function versionKey(name: string): string {
  return name.toLowerCase();
}

export const GLOBAL_SCOPE = 'global';
const SCOPE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** A registry scope as given → its stored form: trimmed and lowercased, a blank one "global". */
export function normalizeScope(input: string | undefined): string {
  const scope = (input ?? '').trim().toLowerCase();
  if (scope === '') return GLOBAL_SCOPE;
  if (!SCOPE.test(scope))
    fail(
      'INVALID_NAME',
      `invalid scope ${JSON.stringify(input)}: a scope uses only a-z, 0-9, ".", "_" and "-" (compared ` +
        `lowercased), begins with a letter or digit, at most 64 characters`,
      {scope: input},
    );
  return scope;
}

/** A share in percent, 0–100 with at most two decimals, as basis points (integer arithmetic from here on). */
export function percentToBasisPoints(input: string, flag: string): number {
  if (!/^(100(\.0{1,2})?|\d{1,2}(\.\d{1,2})?)$/.test(input.trim()))
    fail('USAGE', `${flag} must be a percentage from 0 to 100 with at most two decimals, not ${JSON.stringify(input)}`);
  const [whole, frac = ''] = input.trim().split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
}

export function basisPointsText(bp: number): string {
  return `${Math.trunc(bp / 100)}${
    bp % 100 === 0
      ? ''
      : `.${String(bp % 100)
          .padStart(2, '0')
          .replace(/0$/, '')}`
  }%`;
}

export interface CanarySettings {
  /** null: the whole scope. */
  basis_points: number | null;
  tenants: string[];
  resource_families: string[];
  /**
   * What salts the cohort instead of the release's version (to keep a cohort across releases on purpose); absent: the
   * version.
   */
  salt?: string;
}

export interface ShadowSettings {
  basis_points: number;
  daily_cap: number;
}

export const DEFAULT_SHADOW: ShadowSettings = {basis_points: 0, daily_cap: 100};

export interface RegistryRelease {
  version: string;
  state: ReleaseState;
  canary: CanarySettings | null;
  shadow: ShadowSettings | null;
}

/** The one mutable document of a scope and scenario. Keyed by versionKey. */
export interface Registry {
  schema_version: 1;
  scenario: string;
  scope: string;
  releases: Record<string, RegistryRelease>;
  /** The versions this deployment can run (null: every named version), and its default. */
  runnable: {versions: string[] | null; default_version: string | null};
  /**
   * The receipt that wrote this registry: its number, and the digest of everything in it but the registry (null: none
   * yet).
   */
  receipt: {seq: number; sha256: string} | null;
}

export function emptyRegistry(scenario: string, scope: string): Registry {
  return {
    schema_version: 1,
    scenario,
    scope,
    releases: {},
    runnable: {versions: null, default_version: null},
    receipt: null,
  };
}

export interface ReleaseDescriptor {
  schema_version: 1;
  scenario: string;
  version: string;
  bundle_digest: string;
  parent_version: string | null;
  rollback_targets: string[];
  /** The scope the rollback targets served in. */
  rollback_scope: string;
  vocabulary_version: string | null;
  compatible_vocabularies: string[];
  model_profiles: string[];
  golden_inputs: Array<{name: string; sha256: string; bytes: number}>;
  actor: string;
  created_at: string;
  /** SHA-256 of the canonical JSON of the descriptor without this field: an edit by hand is found. */
  digest: string;
}

export function descriptorDigest(d: Omit<ReleaseDescriptor, 'digest'> & {digest?: string}): string {
  const {digest: _digest, ...rest} = d;
  return stableDigest(rest);
}

export interface Blocker {
  code: string;
  detail: string;
}

export interface TransitionReceipt {
  schema_version: 1;
  seq: number;
  scenario: string;
  scope: string;
  action: 'transition' | 'runnable' | 'rollback';
  /** A rollback receipt: the execution it carries out. */
  execution_key?: string;
  version: string | null;
  bundle_digest: string | null;
  actor: string;
  at: string;
  from_state: ReleaseState | null;
  requested_state: string | null;
  target_state: ReleaseState | null;
  applied: boolean;
  blockers: Blocker[];
  rationale: string;
  deprecated_versions: string[];
  promotion_id: string | null;
  registry_before: string | null;
  registry_after: string | null;
  /**
   * The registry this receipt wrote (applied), so that a crash before the registry is completed from it; null when
   * blocked.
   */
  registry: Registry | null;
  previous_receipt_sha256: string | null;
}

/** Whether a version is runnable under a registry's runnable set. */
export function isRunnable(registry: Registry, version: string): boolean {
  const set = registry.runnable.versions;
  return set === null || set.some((v) => versionKey(v) === versionKey(version));
}

/**
 * The one rule a stored registry must keep beyond its schema: canonical names, keyed by version, no ACTIVE in global,
 * at most one elsewhere.
 */
export function registryProblem(r: Registry, scope: string, scenario: string): string | null {
  if (r.scope !== scope) return `names scope ${JSON.stringify(r.scope)} but is stored as ${scope}`;
  if (r.scenario !== scenario) return `names scenario ${JSON.stringify(r.scenario)}, not ${JSON.stringify(scenario)}`;
  for (const [key, rel] of Object.entries(r.releases))
    if (versionKey(rel.version) !== key)
      return `release ${JSON.stringify(rel.version)} is stored under key ${JSON.stringify(key)}`;
  const active = Object.values(r.releases).filter((x) => x.state === 'ACTIVE');
  if (scope === GLOBAL_SCOPE && active.length > 0)
    return (
      `the global registry stores ${active[0]!.version} as ACTIVE: in the global scope ACTIVE is read from ` +
      `active.json alone`
    );
  if (active.length > 1) return `${active.length} releases are ACTIVE in scope ${scope}; at most one is`;
  const d = r.runnable.default_version;
  if (d !== null && r.runnable.versions !== null && !r.runnable.versions.some((v) => versionKey(v) === versionKey(d)))
    return `default version ${d} is not in the runnable set`;
  return null;
}

/** A receipt but for the registry it carries: what that registry's `receipt.sha256` covers. */
export type ReceiptCore = Omit<TransitionReceipt, 'registry' | 'registry_after'>;

export function receiptCore(r: TransitionReceipt): ReceiptCore {
  const {registry: _registry, registry_after: _after, ...core} = r;
  return core;
}

/**
 * The receipt, whole: an applied one carries the registry it writes, which
 * names it by number and by the digest of the rest of the receipt, so every
 * byte of the newest applied receipt is bound to the registry in force.
 */
export function sealReceipt(core: ReceiptCore, next: Registry | null): TransitionReceipt {
  if (next === null) return {...core, registry: null, registry_after: core.registry_before};
  const registry: Registry = {...next, receipt: {seq: core.seq, sha256: stableDigest(core)}};
  return {...core, registry, registry_after: stableDigest(registry)};
}
