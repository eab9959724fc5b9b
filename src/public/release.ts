/**
 * autoctx/release: routing for hosts that embed autoctx. openRouter loads a
 * snapshot of the registry and active.json and decides each request in
 * memory (looking again at most every SNAPSHOT_MAX_AGE_MS); decideRoute and
 * bucketOf are the pure decision, as docs/vectors/routing.v1.json pins it.
 */
export {
  openRouter,
  route,
  routeSnapshot,
  SNAPSHOT_MAX_AGE_MS,
  type Router,
  type RouterOptions,
  type RouteOptions,
  type RouteResult,
} from '../core/release/route.js';
export {
  bucketOf,
  bucketText,
  decideRoute,
  requesterOf,
  shadowBucket,
  BUCKETS,
  CANARY_ALGORITHM,
  SHADOW_ALGORITHM,
  type RouteDecision,
  type RouteReason,
  type RouteRequest,
  type RouteSnapshot,
  type SnapshotCanary,
} from '../model/release/routing.js';
export {
  RELEASE_STATES,
  STATE_ALIASES,
  canonicalState,
  normalizeScope,
  type ReleaseState,
} from '../model/release/release.js';
