import {describe, expect, it} from '@jest/globals';
import {applyTransition, effectiveState, releaseGate} from '../../src/model/release/release-gate.js';
import {
  canonicalState,
  emptyRegistry,
  normalizeScope,
  percentToBasisPoints,
  RELEASE_STATES,
  STATE_ALIASES,
  TRANSITIONS,
  versionNameProblem,
  type ReleaseState,
} from '../../src/model/release/release.js';

// The transition table as docs/releases.md writes it out (reference C.4, plus SHADOW and CANARY to themselves for new
// settings).
const TABLE: Record<ReleaseState, ReleaseState[]> = {
  DRAFT: ['SHADOW', 'RETIRED'],
  SHADOW: ['SHADOW', 'CANARY', 'DRAFT', 'RETIRED'],
  CANARY: ['CANARY', 'ACTIVE', 'SHADOW', 'DEPRECATED'],
  ACTIVE: ['DEPRECATED'],
  DEPRECATED: ['RETIRED'],
  RETIRED: [],
};

const ok = {scope: 'global', version: 'v2', runnable: true, evidence: null, otherActive: true};

describe('the release gate', () => {
  it('follows the transition table in every one of the 36 cells', () => {
    expect(TRANSITIONS).toEqual(TABLE);
    for (const from of RELEASE_STATES) {
      for (const to of RELEASE_STATES) {
        const blockers = releaseGate({...ok, from, to});
        const legal = TABLE[from].includes(to);
        expect([from, to, blockers.map((b) => b.code)]).toEqual([from, to, legal ? [] : ['ILLEGAL_STATE_TRANSITION']]);
      }
    }
  });

  it("says DEPRECATED→ACTIVE is a rollback's alone", () => {
    expect(releaseGate({...ok, from: 'DEPRECATED', to: 'ACTIVE'})[0]!.detail).toMatch(/only autoctx rollback/);
  });

  it(
    'checks the evidence each target needs: runnable for SHADOW, CANARY, ACTIVE; the ' +
      "canary evidence for CANARY and a scope's ACTIVE; another ACTIVE for DEPRECATED",
    () => {
      const missing = {code: 'EVALUATION_NOT_FOR_BUNDLE_HASH', detail: 'against another bundle'};
      expect(releaseGate({...ok, from: 'DRAFT', to: 'SHADOW', runnable: false}).map((b) => b.code)).toEqual([
        'BUNDLE_NOT_RUNNABLE',
      ]);
      expect(
        releaseGate({...ok, from: 'SHADOW', to: 'CANARY', runnable: false, evidence: missing}).map((b) => b.code),
      ).toEqual(['BUNDLE_NOT_RUNNABLE', 'EVALUATION_NOT_FOR_BUNDLE_HASH']);
      // The global ACTIVE's evidence is promote's own gates; a scope's ACTIVE is gated like a canary.
      expect(releaseGate({...ok, from: 'CANARY', to: 'ACTIVE', evidence: missing})).toEqual([]);
      expect(releaseGate({...ok, scope: 'eu', from: 'CANARY', to: 'ACTIVE', evidence: missing})).toEqual([missing]);
      expect(releaseGate({...ok, from: 'CANARY', to: 'DEPRECATED', otherActive: false}).map((b) => b.code)).toEqual([
        'NO_OTHER_ACTIVE_RELEASE',
      ]);
      expect(releaseGate({...ok, from: 'ACTIVE', to: 'DEPRECATED', otherActive: false}).map((b) => b.code)).toEqual([
        'NO_OTHER_ACTIVE_RELEASE',
      ]);
      expect(releaseGate({...ok, from: 'DRAFT', to: 'RETIRED', runnable: false})).toEqual([]);
    },
  );
});

describe('state names, version names, scopes, percentages', () => {
  it(
    'accepts canonical names and the older ones on input, any ' +
      'case, and refuses anything else (never a fallback to ACTIVE)',
    () => {
      for (const s of RELEASE_STATES) expect(canonicalState(s.toLowerCase())).toBe(s);
      expect(canonicalState('EVAL_ONLY')).toBe('SHADOW');
      expect(canonicalState('production')).toBe('ACTIVE');
      expect(canonicalState('ROLLED_BACK')).toBe('DEPRECATED');
      for (const [alias, state] of Object.entries(STATE_ALIASES)) expect(canonicalState(alias)).toBe(state);
      expect(canonicalState('LIVE')).toBeNull();
      expect(canonicalState('')).toBeNull();
    },
  );

  it('takes version names of [A-Za-z0-9._-] only, not only dots, not "unnamed"', () => {
    for (const good of ['v20', '2026.12.01-a', 'V_2']) expect(versionNameProblem(good)).toBeNull();
    for (const bad of ['', 'v 2', 'v/2', 'é', '..', 'Unnamed', 'x'.repeat(65)])
      expect(versionNameProblem(bad)).not.toBeNull();
  });

  it('trims and lowercases a scope, a blank one is global', () => {
    expect(normalizeScope(undefined)).toBe('global');
    expect(normalizeScope('   ')).toBe('global');
    expect(normalizeScope(' PLATFORM_GLOBAL ')).toBe('platform_global');
    expect(() => normalizeScope('eu/west')).toThrow(/invalid scope/);
  });

  it('reads a percentage with at most two decimals as basis points, exactly', () => {
    expect([
      percentToBasisPoints('0', 'p'),
      percentToBasisPoints('12.5', 'p'),
      percentToBasisPoints('0.01', 'p'),
      percentToBasisPoints('100', 'p'),
    ]).toEqual([0, 1250, 1, 10000]);
    for (const bad of ['101', '-1', '1.234', 'ten', '1e2']) expect(() => percentToBasisPoints(bad, 'p')).toThrow();
  });
});

describe('registry changes and derived states', () => {
  it("keeps a canary's settings when only some are given, and drops them when it leaves CANARY", () => {
    let r = applyTransition(emptyRegistry('demo', 'global'), {
      version: 'v2',
      to: 'CANARY',
      settings: {canary: {basis_points: 1000, tenants: ['acme']}},
      deprecate: [],
    });
    r = applyTransition(r, {version: 'v2', to: 'CANARY', settings: {canary: {basis_points: 2500}}, deprecate: []});
    expect(r.releases.v2!.canary).toEqual({basis_points: 2500, tenants: ['acme'], resource_families: []});
    r = applyTransition(r, {version: 'v2', to: 'SHADOW', settings: {}, deprecate: []});
    expect(r.releases.v2).toEqual({
      version: 'v2',
      state: 'SHADOW',
      canary: null,
      shadow: {basis_points: 0, daily_cap: 100},
    });
  });

  it('stores no ACTIVE in the global scope, and one elsewhere', () => {
    const g = applyTransition(emptyRegistry('demo', 'global'), {
      version: 'v2',
      to: 'ACTIVE',
      settings: {},
      deprecate: ['v1'],
    });
    expect(g.releases).toEqual({v1: {version: 'v1', state: 'DEPRECATED', canary: null, shadow: null}});
    const eu = applyTransition(emptyRegistry('demo', 'eu'), {version: 'v2', to: 'ACTIVE', settings: {}, deprecate: []});
    expect(eu.releases.v2!.state).toBe('ACTIVE');
  });

  it(
    'reads the global ACTIVE from active.json, and a served ' +
      'release as DEPRECATED or RETIRED whatever moved the pointer',
    () => {
      const canary = {version: 'v2', state: 'CANARY' as const, canary: null, shadow: null};
      expect(effectiveState('global', canary, {isGlobalActive: true, servedGlobally: true})).toBe('ACTIVE');
      expect(effectiveState('global', canary, {isGlobalActive: false, servedGlobally: true})).toBe('DEPRECATED');
      expect(
        effectiveState('global', {...canary, state: 'RETIRED'}, {isGlobalActive: false, servedGlobally: true}),
      ).toBe('RETIRED');
      expect(effectiveState('global', canary, {isGlobalActive: false, servedGlobally: false})).toBe('CANARY');
      expect(effectiveState('global', undefined, {isGlobalActive: false, servedGlobally: false})).toBe('DRAFT');
      expect(effectiveState('eu', canary, {isGlobalActive: true, servedGlobally: true})).toBe('CANARY');
    },
  );
});
