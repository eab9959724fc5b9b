import {describe, expect, it} from '@jest/globals';
import {
  canTransition,
  checkServeable,
  confirmationPolicyDigest,
  createBundle,
  createJsonComponent,
  DEFAULT_CONFIRMATION_POLICY,
  LIFECYCLES,
  validateBundle,
  validateConfirmationPolicy,
  type Lifecycle,
} from '../../src/model/index.js';
import {canonicalJson, parseJson, prettyJson} from '../../src/canonical/index.js';

describe('lifecycle transitions', () => {
  const allowed: Array<[Lifecycle, Lifecycle]> = [
    ['proposed', 'screened'],
    ['proposed', 'confirmed'],
    ['proposed', 'rejected'],
    ['screened', 'screened'],
    ['screened', 'confirmed'],
    ['screened', 'rejected'],
    ['confirmed', 'active'],
    ['confirmed', 'rejected'],
    ['active', 'superseded'],
    ['superseded', 'active'],
  ];
  it(
    'permits exactly the implemented transitions, including ' +
      'screened→rejected, confirmed→rejected and superseded→active',
    () => {
      for (const from of LIFECYCLES) {
        for (const to of LIFECYCLES) {
          const expected = allowed.some(([a, b]) => a === from && b === to);
          expect([from, to, canTransition(from, to)]).toEqual([from, to, expected]);
        }
      }
    },
  );
  it('rejected is terminal', () => {
    expect(LIFECYCLES.filter((to) => canTransition('rejected', to))).toEqual([]);
  });
});

describe('confirmation policy', () => {
  it('the default policy has the reference digest', () => {
    expect(confirmationPolicyDigest(DEFAULT_CONFIRMATION_POLICY)).toBe(
      '226975fd1485ef6379d6ac8933cb2621655dffaccf5a938cef7f0b04a72e592c',
    );
  });
  it.each([
    [{min_screen_pairs: 0}, /min_screen_pairs/],
    [{min_confirmation_pairs: 1}, /min_confirmation_pairs/],
    [{max_confirmation_pairs: 5}, /max_confirmation_pairs/],
    [{min_heldout_pairs: 0}, /min_heldout_pairs/],
    [{min_effect: Number.NaN}, /min_effect/],
    [{confidence_z: 0}, /confidence_z/],
    [{min_screen_pairs: 1.5}, /integer/],
    [{extra: 1}, /unknown keys/],
  ])('refuses %j', (change, message) => {
    expect(() => validateConfirmationPolicy({...DEFAULT_CONFIRMATION_POLICY, ...change})).toThrow(message);
  });
});

describe('bundles', () => {
  const components = [
    {kind: 'playbook', key: 'playbook', content: 'p', media_type: 'text/markdown'},
    {kind: 'hints', key: 'hints', content: 'h', media_type: 'text/markdown'},
    createJsonComponent('routing_config', 'roles', {model_competitor: 'small'}),
  ];
  const bundle = createBundle({scenario: 's', evaluator_epoch: 'e', parent_digest: null, components});

  it('the digest is stable across component input order', () => {
    expect(
      createBundle({scenario: 's', evaluator_epoch: 'e', parent_digest: null, components: [...components].reverse()})
        .digest,
    ).toBe(bundle.digest);
  });
  it('rejects unsorted components, duplicates, a missing digest and tampered content, digest or kind on load', () => {
    const m = JSON.parse(JSON.stringify(bundle));
    expect(() => validateBundle({...m, components: [...m.components].reverse()})).toThrow(/not sorted/);
    expect(() => validateBundle({...m, components: [m.components[0], m.components[0]]})).toThrow(/duplicate/);
    const {digest: _d, ...noDigest} = m;
    expect(() => validateBundle(noDigest)).toThrow(/missing digest/);
    for (const field of ['content', 'digest', 'kind'] as const) {
      const t = JSON.parse(JSON.stringify(bundle));
      t.components[0][field] = field === 'kind' ? 'tool_spec' : field === 'digest' ? '0'.repeat(64) : 'tampered';
      expect(() => validateBundle(t)).toThrow(/digest mismatch|not sorted/);
    }
    expect(() => validateBundle({...m, parent_digest: 'abc'})).toThrow(/parent_digest/);
    expect(() => validateBundle({...m, scenario: 'other'})).toThrow(/manifest digest mismatch/);
  });
  it('the parent and the epoch are part of the digest', () => {
    expect(createBundle({scenario: 's', evaluator_epoch: 'e2', parent_digest: null, components}).digest).not.toBe(
      bundle.digest,
    );
    expect(
      createBundle({scenario: 's', evaluator_epoch: 'e', parent_digest: bundle.digest, components}).digest,
    ).not.toBe(bundle.digest);
  });
});

describe('serveability', () => {
  const withRoles = (roles: unknown) =>
    createBundle({
      scenario: 's',
      evaluator_epoch: 'e',
      parent_digest: null,
      components: [createJsonComponent('routing_config', 'roles', roles)],
    });
  it.each([
    [{unknown_key: 1}, /unsupported keys: unknown_key/],
    [{dag_changes: ['x']}, /dag_changes/],
    [{tuning_proposal: {a: 1}}, /tuning_proposal/],
  ])('refuses %j', (roles, message) => {
    expect(() => checkServeable(withRoles(roles), null)).toThrow(message);
  });
  it('refuses a change of a construction-bound field against the incumbent, accepts live fields', () => {
    expect(() => checkServeable(withRoles({judge_model: 'b'}), withRoles({judge_model: 'a'}))).toThrow(
      /construction-bound field judge_model/,
    );
    expect(() =>
      checkServeable(withRoles({judge_model: 'a', model_coach: 'x'}), withRoles({judge_model: 'a'})),
    ).not.toThrow();
  });
});

describe('canonical JSON properties', () => {
  it('parse → canonical → parse is a fixed point, and prettyJson parses back to the same value', () => {
    const value = parseJson('{"b":[1,2.5,-0,1e-7,"\\u00e9\\ud83d\\ude00"],"a":{"10":true,"9":null,"\\r":""}}');
    const once = canonicalJson(value);
    expect(canonicalJson(parseJson(once))).toBe(once);
    expect(canonicalJson(parseJson(prettyJson(value)))).toBe(once);
    const keys = prettyJson(value)
      .split('\n')
      .map((l) => /^\s*("(?:[^"\\]|\\.)*"): /.exec(l)?.[1])
      .filter((k): k is string => k !== undefined)
      .map((k) => JSON.parse(k) as string);
    expect(keys).toEqual(['a', '\r', '10', '9', 'b']);
  });
  it('rejects non-finite numbers, deep nesting and non-JSON values', () => {
    expect(() => canonicalJson(Number.POSITIVE_INFINITY)).toThrow(/non-finite/);
    expect(() => parseJson('1e400')).toThrow(/non-finite/);
    expect(() => parseJson(`${'['.repeat(300)}${']'.repeat(300)}`)).toThrow(/nesting/);
    expect(() => canonicalJson({a: undefined})).toThrow(/undefined/);
    expect(() => canonicalJson(new Date())).toThrow(/plain JSON object/);
  });
});
