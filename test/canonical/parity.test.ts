import {readFileSync} from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {canonicalJson, parseJson, stableDigest} from '../../src/canonical/index.js';
import {createBundle, createJsonComponent, validateBundle} from '../../src/model/index.js';
import {manifestDiff} from '../../src/model/bundle/diff.js';
import {matchedTrialPairKey} from '../../src/model/evaluation/trial.js';
import {FIXTURES} from '../helpers/paths.js';

const load = (name: string) => JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8'));

describe('canonical-parity.json', () => {
  const fixture = load('canonical-parity.json');

  const cases: Array<[string, {value: unknown; canonical: string; digest: string}]> = fixture.canonical_cases.map(
    (c: {name: string}) => [c.name, c],
  );
  it.each(cases)('canonical case %s matches byte for byte', (_name, {value, canonical, digest}) => {
    expect(canonicalJson(value)).toBe(canonical);
    expect(stableDigest(value)).toBe(digest);
  });

  const unsafe: Array<[string, string]> = fixture.unsafe_integer_cases.map((c: {name: string; json: string}) => [
    c.name,
    c.json,
  ]);
  it.each(unsafe)('rejects unsafe integer case %s', (_name, json) => {
    expect(() => parseJson(json)).toThrow(/safe integer/);
    expect(() => canonicalJson(JSON.parse(json))).toThrow(/safe integer/);
  });

  const lone: Array<[string, string]> = fixture.invalid_unicode_cases.map((c: {name: string; json: string}) => [
    c.name,
    c.json,
  ]);
  it.each(lone)('rejects lone surrogate case %s', (_name, json) => {
    expect(() => parseJson(json)).toThrow(/lone UTF-16 surrogate/);
    expect(() => canonicalJson(JSON.parse(json))).toThrow(/lone UTF-16 surrogate/);
  });

  it('builds the unicode bundle with components ordered [😀, דּ] and the expected digest', () => {
    const input = fixture.bundle_input;
    const bundle = createBundle({
      scenario: input.scenario,
      evaluator_epoch: input.evaluator_epoch,
      parent_digest: null,
      components: input.components.map((c: {kind: string; key: string; value: unknown}) =>
        createJsonComponent(c.kind, c.key, c.value),
      ),
    });
    expect(bundle).toEqual(fixture.bundle_manifest);
    expect(bundle.components.map((c) => c.key)).toEqual(['\u{1F600}', '\uFB33']);
    expect(validateBundle(fixture.bundle_manifest)).toEqual(bundle);
  });

  it('computes the matched pair key, unchanged by relabeling lane and fixture', () => {
    const m = fixture.matched_pair_identity;
    expect(matchedTrialPairKey(m)).toBe(m.pair_key);
    expect(matchedTrialPairKey({...m, fixture: 'other', lane: 'heldout'})).toBe(m.pair_key);
  });
});

describe('manifest-parity.json', () => {
  const fixture = load('manifest-parity.json');

  it.each([['baseline'], ['candidate']])(
    '%s: built from parts equals the fixture, and the fixture validates',
    (name) => {
      const m = fixture[name];
      const built = createBundle({
        scenario: m.scenario,
        evaluator_epoch: m.evaluator_epoch,
        parent_digest: m.parent_digest,
        components: [...m.components].reverse(),
      });
      expect(built).toEqual(m);
      expect(canonicalJson(built)).toBe(canonicalJson(m));
      expect(validateBundle(m)).toEqual(built);
    },
  );

  it('rejects a forged component digest and an unknown kind', () => {
    const m = structuredClone(fixture.candidate);
    m.components[0].content = 'forged';
    expect(() => validateBundle(m)).toThrow(/component digest mismatch/);
    const k = structuredClone(fixture.candidate);
    k.components[0].kind = 'nonsense';
    expect(() => validateBundle(k)).toThrow(/invalid shape/);
  });
});

describe('manifest-diff-parity.json', () => {
  it('diff of candidate against baseline equals the fixture, digest included', () => {
    const {baseline, candidate} = load('manifest-parity.json');
    expect(manifestDiff(validateBundle(candidate), validateBundle(baseline))).toEqual(
      load('manifest-diff-parity.json'),
    );
  });
});

describe('causal-attribution-manifest-parity.json', () => {
  it('tested and comparison manifests validate and their diff is the single addition', () => {
    const f = load('causal-attribution-manifest-parity.json');
    const tested = validateBundle(f.tested);
    const comparison = validateBundle(f.comparison);
    const diff = manifestDiff(tested, comparison);
    expect(diff).toEqual(f.manifest_diff);
    expect(canonicalJson(diff)).toBe(canonicalJson(f.manifest_diff));
    expect(diff.changes).toHaveLength(1);
    expect(diff.changes[0]!.comparison_component_digest).toBeNull();
  });
});
