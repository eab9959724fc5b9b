import {hash} from 'node:crypto';
import {canonicalJson} from '../../canonical/index.js';

/**
 * Routing (spec 003: "Choosing the bundle of a request", "Shadow runs and
 * canaries"). Pure and integer-only: a bucket is the first four bytes of the
 * SHA-256 of a canonical JSON array, read as a big-endian unsigned integer,
 * modulo 10,000; a request is in a share of B basis points when its bucket is
 * below B. So raising a share never drops a requester who was in.
 * docs/vectors/routing.v1.json pins every input and answer.
 */
export const CANARY_ALGORITHM = 'autoctx-canary-v1';
export const SHADOW_ALGORITHM = 'autoctx-shadow-v1';
export const BUCKETS = 10_000;

/** The text hashed for a bucket: canonical JSON of [algorithm, …parts] (unambiguous whatever the parts hold). */
export function bucketText(algorithm: string, parts: readonly string[]): string {
  // For well-formed strings JSON.stringify spells a string as canonical JSON does (a test holds the two equal);
  // anything else goes to the general encoder, which refuses a lone surrogate.
  let text = `[${JSON.stringify(algorithm)}`;
  for (const p of parts) {
    if (typeof p !== 'string' || !p.isWellFormed()) return canonicalJson([algorithm, ...parts]);
    text += `,${JSON.stringify(p)}`;
  }
  return `${text}]`;
}

export function bucketOf(algorithm: string, parts: readonly string[]): number {
  const digest = hash('sha256', bucketText(algorithm, parts), 'buffer');
  return digest.readUInt32BE(0) % BUCKETS;
}

export interface RouteRequest {
  user?: string | undefined;
  session?: string | undefined;
  event?: string | undefined;
  tenant?: string | undefined;
  resourceAddress?: string | undefined;
  resourceId?: string | undefined;
}

export type RequesterKind = 'user' | 'session' | 'event';

/** The requester a canary hashes: the user, else the session, else the event; none when all are missing or blank. */
export function requesterOf(r: RouteRequest): {kind: RequesterKind; id: string} | null {
  for (const kind of ['user', 'session', 'event'] as const) {
    const id = r[kind];
    if (typeof id === 'string' && id !== '') return {kind, id};
  }
  return null;
}

export interface SnapshotCanary {
  version: string;
  bundle_digest: string;
  /** null: the whole scope. */
  basis_points: number | null;
  tenants: readonly string[];
  resource_families: readonly string[];
  /**
   * What salts the cohort: the release's version key, unless the canary names another (to keep a cohort on purpose).
   */
  salt: string;
  runnable: boolean;
}

/** What a decision reads: loaded once, decided over in memory. */
export interface RouteSnapshot {
  scenario: string;
  scope: string;
  /** The scope's ACTIVE: its own release, else the global one (active.json). */
  active: {version: string | null; bundle_digest: string; source: 'scope' | 'global'};
  canaries: readonly SnapshotCanary[];
  /** Why the registry could not be used (routing then serves active.json's bundle), or null. */
  registry_problem: string | null;
}

export type RouteReason =
  | 'canary'
  | 'active'
  | 'no_requester'
  | 'outside_share'
  | 'tenant_filtered'
  | 'resource_filtered'
  | 'not_runnable'
  | 'registry_integrity';

export interface RouteDecision {
  algorithm: typeof CANARY_ALGORITHM;
  scenario: string;
  scope: string;
  bundle_digest: string;
  version: string | null;
  state: 'ACTIVE' | 'CANARY';
  reason: RouteReason;
  requester: RequesterKind | null;
  /** The requester's bucket for the canary considered last (null when none was hashed). */
  bucket: number | null;
  /** Canary versions passed over because this deployment cannot run them. */
  not_runnable: string[];
}

function resourceMatches(families: readonly string[], r: RouteRequest): boolean {
  return families.some(
    (f) =>
      (r.resourceAddress !== undefined && r.resourceAddress.startsWith(f)) ||
      (r.resourceId !== undefined && r.resourceId === f),
  );
}

/**
 * The bundle that serves one request. Canaries are taken in version order;
 * the first whose filters admit the request and whose share holds its
 * requester serves it. Otherwise the scope's ACTIVE does, with the reason the
 * last canary gave.
 */
/**
 * One decision, every field written out (a spread of a shared base costs more than the hash: the bench row watches it).
 */
function decision(
  s: RouteSnapshot,
  bundle: string,
  version: string | null,
  state: 'ACTIVE' | 'CANARY',
  reason: RouteReason,
  requester: RequesterKind | null,
  bucket: number | null,
  notRunnable: string[],
): RouteDecision {
  return {
    algorithm: CANARY_ALGORITHM,
    scenario: s.scenario,
    scope: s.scope,
    bundle_digest: bundle,
    version,
    state,
    reason,
    requester,
    bucket,
    not_runnable: notRunnable,
  };
}

export function decideRoute(s: RouteSnapshot, r: RouteRequest): RouteDecision {
  const active = (
    reason: RouteReason,
    requester: RequesterKind | null,
    bucket: number | null,
    notRunnable: string[],
  ): RouteDecision =>
    decision(s, s.active.bundle_digest, s.active.version, 'ACTIVE', reason, requester, bucket, notRunnable);
  if (s.registry_problem !== null) return active('registry_integrity', null, null, []);
  const who = requesterOf(r);
  let reason: RouteReason = 'active';
  let bucket: number | null = null;
  const notRunnable: string[] = [];
  for (const c of s.canaries) {
    if (!c.runnable) {
      notRunnable.push(c.version);
      reason = 'not_runnable';
      continue;
    }
    if (c.tenants.length > 0 && (r.tenant === undefined || !c.tenants.includes(r.tenant))) {
      reason = 'tenant_filtered';
      continue;
    }
    if (c.resource_families.length > 0 && !resourceMatches(c.resource_families, r)) {
      reason = 'resource_filtered';
      continue;
    }
    if (who === null) {
      reason = 'no_requester';
      continue;
    }
    if (c.basis_points === 0) {
      reason = 'outside_share';
      continue;
    }
    bucket = bucketOf(CANARY_ALGORITHM, [s.scope, s.scenario, c.salt, who.kind, who.id]);
    if (c.basis_points === null || bucket < c.basis_points)
      return decision(s, c.bundle_digest, c.version, 'CANARY', 'canary', who.kind, bucket, notRunnable);
    reason = 'outside_share';
  }
  return active(reason, who?.kind ?? null, bucket, notRunnable);
}

/** Whether an event is in a shadow run's sample: its bucket below the share (0: none). */
export function shadowBucket(scope: string, scenario: string, salt: string, event: string): number {
  return bucketOf(SHADOW_ALGORITHM, [scope, scenario, salt, event]);
}

/**
 * The bundle a delivery renders from, and why: routing's answer for the session, or the one the session was pinned to.
 */
export interface Serving {
  bundle_digest: string;
  version: string | null;
  state: 'ACTIVE' | 'CANARY';
  reason: RouteReason | 'pinned';
}
