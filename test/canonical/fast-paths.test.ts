import {describe, expect, it} from '@jest/globals';
import {createHash} from 'node:crypto';
import fc from 'fast-check';
import {canonicalJson, stableDigest} from '../../src/canonical/index.js';
import {jsonValues} from '../helpers/arbitraries.js';
import {bundleDigest, createBundle, validateBundle} from '../../src/model/bundle/bundle.js';
import {componentDigest} from '../../src/model/bundle/component.js';
import {manifestDiff} from '../../src/model/bundle/diff.js';
import {canonicalOracle as oracle} from '../helpers/canonical-oracle.js';

// The hashing fast paths (a value already in key order goes to JSON.stringify whole; a manifest's
// contents are escaped once for both digests) must give the bytes of the plain definition.

const text = fc.oneof(
  fc.string({unit: 'grapheme'}),
  fc.string({unit: 'binary'}).filter((s) => s.isWellFormed()),
  fc.constantFrom('', '"\\\n\t\u0000\u001f\u007f\u2028', '\u{1F600}é'),
);
const keyText = fc.oneof(
  text,
  fc.constantFrom('0', '1', '9', '10', '4294967294', '4294967295', '-1', '01', '__proto__', 'toJSON'),
);

describe("canonical JSON fast paths give the definition's bytes", () => {
  it('for any value, in any key order, including array-index keys that V8 orders numerically', () => {
    const json = jsonValues({text, key: keyText, maxKeys: 5, canonical: true});
    fc.assert(
      fc.property(json, (v) => {
        expect(canonicalJson(v)).toBe(oracle(v));
      }),
      {numRuns: 500, seed: 2026},
    );
    expect(canonicalJson({10: 1, 9: 2, a: 3})).toBe('{"10":1,"9":2,"a":3}');
  });

  it('rows of a few shapes, keys in any order (the JSON.stringify text sorted in place)', () => {
    const shapeKeys = fc.uniqueArray(keyText, {minLength: 1, maxLength: 6});
    const rows = fc.tuple(
      fc.array(shapeKeys, {minLength: 1, maxLength: 4}),
      fc.array(
        fc.tuple(
          fc.nat(),
          fc.nat(),
          fc.oneof(text, fc.double({noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6}), fc.constant(null)),
        ),
        {maxLength: 40},
      ),
    );
    fc.assert(
      fc.property(rows, ([shapes, picks]) => {
        const value = picks.map(([s, rot, leaf]) => {
          const keys = shapes[s % shapes.length]!;
          const turned = [...keys.slice(rot % keys.length), ...keys.slice(0, rot % keys.length)];
          const row: Record<string, unknown> = {};
          for (const k of turned)
            Object.defineProperty(row, k, {
              value: k === turned[0] ? {inner: leaf, also: [leaf]} : leaf,
              enumerable: true,
              writable: true,
              configurable: true,
            });
          return row;
        });
        expect(canonicalJson(value)).toBe(oracle(value));
        expect(stableDigest(value)).toBe(createHash('sha256').update(oracle(value)).digest('hex'));
      }),
      {numRuns: 300, seed: 2027},
    );
  });

  it('component and manifest digests equal the digest of the plain objects', () => {
    const component = fc.record({
      kind: fc.constantFrom('playbook', 'hints', 'prompt_fragment', 'tool_guidance', 'completion_check'),
      key: text.filter((s) => s.trim() !== ''),
      content: text,
      media_type: fc.constantFrom('text/markdown', 'application/json', 'text/plain; charset="utf-8"'),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(component, {selector: (c) => `${c.kind}\u0000${c.key}`, maxLength: 6}),
        text.filter((s) => s.trim() !== ''),
        (components, scenario) => {
          const b = createBundle({scenario, evaluator_epoch: 'epoch "1"', parent_digest: null, components});
          for (const c of b.components)
            expect(c.digest).toBe(
              stableDigest({media_type: c.media_type, kind: c.kind, key: c.key, content: c.content}),
            );
          const plain = {
            schema_version: 1,
            scenario,
            parent_digest: null,
            evaluator_epoch: 'epoch "1"',
            components: b.components.map((c) => ({
              kind: c.kind,
              media_type: c.media_type,
              key: c.key,
              digest: c.digest,
              content: c.content,
            })),
          };
          expect(b.digest).toBe(stableDigest(plain));
          expect(bundleDigest(b)).toBe(b.digest);
          expect(validateBundle(JSON.parse(JSON.stringify(b)))).toEqual(b);
        },
      ),
      {numRuns: 300, seed: 2026},
    );
  });

  it('the manifest diff is the definition: the union of (kind, key) in UTF-16 order, equal digests skipped', () => {
    const component = fc.record({
      kind: fc.constantFrom('playbook', 'hints', 'routing_config'),
      key: fc.constantFrom('a', 'B', 'b', 'é', '\u{1F600}', 'ab'),
      content: fc.constantFrom('x', 'y'),
    });
    const side = fc.uniqueArray(component, {selector: (c) => `${c.kind}\u0000${c.key}`, maxLength: 8});
    const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
    fc.assert(
      fc.property(side, side, (left, right) => {
        const make = (components: typeof left) =>
          createBundle({scenario: 's', evaluator_epoch: 'e', parent_digest: null, components});
        const [a, b] = [make(left), make(right)];
        const ids = [...new Set([...a.components, ...b.components].map((c) => JSON.stringify([c.kind, c.key])))].map(
          (x) => JSON.parse(x) as [string, string],
        );
        ids.sort((x, y) => cmp(x[0], y[0]) || cmp(x[1], y[1]));
        const digestOf = (bundle: typeof a, [kind, key]: [string, string]) =>
          bundle.components.find((c) => c.kind === kind && c.key === key)?.digest ?? null;
        const want = ids
          .map((id) => ({
            component_kind: id[0],
            component_key: id[1],
            tested_component_digest: digestOf(a, id),
            comparison_component_digest: digestOf(b, id),
          }))
          .filter((c) => c.tested_component_digest !== c.comparison_component_digest);
        const diff = manifestDiff(a, b);
        expect(diff.changes).toEqual(want);
        expect(diff.digest).toBe(
          stableDigest({
            schema_version: 1,
            tested_bundle_digest: a.digest,
            comparison_bundle_digest: b.digest,
            evaluator_epoch: 'e',
            changes: want,
          }),
        );
      }),
      {numRuns: 300, seed: 2026},
    );
  });

  it('a lone surrogate anywhere in a component is refused with its code, as by the plain encoder', () => {
    for (const c of [
      {kind: 'playbook', key: 'k', content: 'a\ud800b', media_type: 'text/plain'},
      {kind: 'playbook', key: 'k\udc00', content: 'a', media_type: 'text/plain'},
      {kind: 'playbook', key: 'k', content: 'a', media_type: 'text/\ud800'},
    ]) {
      expect(() => componentDigest(c)).toThrow(expect.objectContaining({code: 'LONE_SURROGATE'}));
    }
  });
});
