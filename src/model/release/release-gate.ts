import {
  DEFAULT_SHADOW,
  GLOBAL_SCOPE,
  transitionAllowed,
  versionKey,
  type Blocker,
  type CanarySettings,
  type Registry,
  type RegistryRelease,
  type ReleaseState,
  type ShadowSettings,
} from './release.js';

/**
 * Blocker codes the gate itself raises (the evidence check adds its own: EVALUATION_MISSING,
 * EVALUATION_NOT_FOR_BUNDLE_HASH, …).
 */
export const GATE_BLOCKERS = {
  ILLEGAL_STATE_TRANSITION: "the transition is not in the transition table from the release's current state",
  BUNDLE_NOT_RUNNABLE: "the release is not in the scope's runnable set",
  NO_OTHER_ACTIVE_RELEASE: 'a release moves to DEPRECATED only while another release of its scope is ACTIVE',
} as const;

export interface GateInput {
  scope: string;
  version: string;
  from: ReleaseState;
  to: ReleaseState;
  runnable: boolean;
  /** For CANARY, and ACTIVE outside the global scope: the evidence check's blocker, or null when it passed. */
  evidence: Blocker | null;
  /** Whether the scope has an ACTIVE release other than this one. */
  otherActive: boolean;
}

/**
 * The one release gate: the transition table first (a transition it does
 * not allow is blocked with that alone), then the evidence the target needs.
 * Pure. The global ACTIVE's evidence is promote's own gates.
 */
export function releaseGate(g: GateInput): Blocker[] {
  if (!transitionAllowed(g.from, g.to)) {
    const detail =
      g.from === 'DEPRECATED' && g.to === 'ACTIVE'
        ? `${g.version} is DEPRECATED: only autoctx rollback moves a deprecated release back to ACTIVE`
        : g.from === g.to
          ? `${g.version} is already ${g.from}; only SHADOW and CANARY take new settings in place`
          : `${g.version} is ${g.from}, and ${g.from}→${g.to} is not in the transition table`;
    return [{code: 'ILLEGAL_STATE_TRANSITION', detail}];
  }
  const blockers: Blocker[] = [];
  if ((g.to === 'SHADOW' || g.to === 'CANARY' || g.to === 'ACTIVE') && !g.runnable)
    blockers.push({code: 'BUNDLE_NOT_RUNNABLE', detail: `${g.version} is not in the runnable set of scope ${g.scope}`});
  if ((g.to === 'CANARY' || (g.to === 'ACTIVE' && g.scope !== GLOBAL_SCOPE)) && g.evidence) blockers.push(g.evidence);
  if (g.to === 'DEPRECATED' && !g.otherActive)
    blockers.push({
      code: 'NO_OTHER_ACTIVE_RELEASE',
      detail: `no other release of scope ${g.scope} is ACTIVE, so ${g.version} cannot be deprecated`,
    });
  return blockers;
}

export interface SettingsChange {
  canary?: {basis_points?: number | null; tenants?: string[]; resource_families?: string[]; salt?: string} | undefined;
  shadow?: {basis_points?: number; daily_cap?: number} | undefined;
}

function canaryOf(existing: CanarySettings | null, change: SettingsChange['canary']): CanarySettings {
  const base = existing ?? {basis_points: null, tenants: [], resource_families: []};
  const salt = change?.salt ?? base.salt;
  return {
    basis_points: change?.basis_points !== undefined ? change.basis_points : base.basis_points,
    tenants: change?.tenants ?? base.tenants,
    resource_families: change?.resource_families ?? base.resource_families,
    ...(salt !== undefined ? {salt} : {}),
  };
}

function shadowOf(existing: ShadowSettings | null, change: SettingsChange['shadow']): ShadowSettings {
  const base = existing ?? DEFAULT_SHADOW;
  return {basis_points: change?.basis_points ?? base.basis_points, daily_cap: change?.daily_cap ?? base.daily_cap};
}

/**
 * The registry after an applied transition: the release in its new state
 * with its settings (given ones replace, others are kept), the versions named
 * deprecated, the receipt's number. In the global scope an ACTIVE release
 * has no entry (active.json is its state).
 */
export function applyTransition(
  registry: Registry,
  t: {version: string; to: ReleaseState; settings: SettingsChange; deprecate: readonly string[]},
): Registry {
  const releases: Record<string, RegistryRelease> = {...registry.releases};
  const key = versionKey(t.version);
  const existing = releases[key];
  for (const v of t.deprecate)
    releases[versionKey(v)] = {
      version: releases[versionKey(v)]?.version ?? v,
      state: 'DEPRECATED',
      canary: null,
      shadow: null,
    };
  if (t.to === 'ACTIVE' && registry.scope === GLOBAL_SCOPE) delete releases[key];
  else {
    releases[key] = {
      version: t.version,
      state: t.to,
      canary:
        t.to === 'CANARY' ? canaryOf(existing?.state === 'CANARY' ? existing.canary : null, t.settings.canary) : null,
      shadow:
        t.to === 'SHADOW' ? shadowOf(existing?.state === 'SHADOW' ? existing.shadow : null, t.settings.shadow) : null,
    };
  }
  return {...registry, releases: sortedReleases(releases)};
}

export function sortedReleases(releases: Record<string, RegistryRelease>): Record<string, RegistryRelease> {
  return Object.fromEntries(Object.entries(releases).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * A release's state in a scope. In the global scope: ACTIVE when active.json
 * names its bundle; else, once its bundle has served (a recorded pointer move
 * made it active), DEPRECATED, or RETIRED if the registry says so (a served
 * release can be nothing else, whoever moved the pointer); else the
 * registry's state, DRAFT when it has none. Elsewhere: the registry's, DRAFT
 * when none.
 */
export function effectiveState(
  scope: string,
  entry: RegistryRelease | undefined,
  facts: {isGlobalActive: boolean; servedGlobally: boolean},
): ReleaseState {
  if (scope !== GLOBAL_SCOPE) return entry?.state ?? 'DRAFT';
  if (facts.isGlobalActive) return 'ACTIVE';
  if (facts.servedGlobally) return entry?.state === 'RETIRED' ? 'RETIRED' : 'DEPRECATED';
  return entry?.state ?? 'DRAFT';
}
