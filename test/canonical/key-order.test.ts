import {describe, expect, it} from '@jest/globals';
import {createHash} from 'node:crypto';
import fc from 'fast-check';
import {canonicalJson, MAX_DEPTH, stableDigest} from '../../src/canonical/index.js';
import {sortKeys, sortKeysDigest} from '../../src/canonical/key-order.js';
import {canonicalOracle as oracle} from '../helpers/canonical-oracle.js';

// key-order.wat puts the members of every object in JSON.stringify's text in key order, in place.
// Held here to the definition, written independently of src/: UTF-16 order of the keys.

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** Object from entries in the given order (defineProperty, so that "__proto__" is an own key). */
function objectOf(entries: Array<[string, unknown]>): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries)
    Object.defineProperty(o, k, {value: v, enumerable: true, writable: true, configurable: true});
  return o;
}

// Characters from each range whose UTF-8 byte order and UTF-16 order agree or differ:
// ASCII, two and three bytes, the last before the surrogates, U+E000 to U+FFFF (after
// the surrogates in UTF-16), beyond U+FFFF (surrogate pairs in UTF-16), and digits.
const plain = [
  'a',
  'b',
  'z',
  '_',
  '1',
  '9',
  '0',
  'é',
  '\u07ff',
  '\u0800',
  '\ud7ff',
  '\ue000',
  '\uffee',
  '\uffff',
  '\u{10000}',
  '\u{1F600}',
  '\u{10ffff}',
];
// Characters JSON.stringify escapes in a key: the sorter leaves such objects to the caller.
const escaped = ['"', '\\', '\n', '\u0000', '\u001f'];
const key = (chars: string[]) => fc.array(fc.constantFrom(...chars), {maxLength: 4}).map((cs) => cs.join(''));
const leaf = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double({noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15}),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('{"a":1}', '[],}{', 'x\\"y', '\\'),
);

function values(chars: string[]) {
  const {tree} = fc.letrec((tie) => ({
    tree: fc.oneof({depthSize: 'small', withCrossShrink: true}, leaf, tie('array'), tie('object')),
    array: fc.array(tie('tree'), {maxLength: 5}),
    // up to 45 keys: Shell's sort then runs with gaps of 13, 4 and 1
    object: fc.uniqueArray(fc.tuple(key(chars), tie('tree')), {selector: ([k]) => k, maxLength: 45}).map(objectOf),
  }));
  return tree;
}

describe('key order in WebAssembly', () => {
  it('sorts every object of any value whose keys hold no escape, in UTF-16 order', () => {
    fc.assert(
      fc.property(values(plain), (v) => {
        const text = JSON.stringify(v);
        expect(sortKeys(text)).toBe(oracle(v));
        expect(sortKeysDigest(text)).toBe(sha(oracle(v)));
        expect(canonicalJson(v)).toBe(oracle(v));
        expect(stableDigest(v)).toBe(sha(oracle(v)));
      }),
      {numRuns: 400, seed: 2028},
    );
  });

  it('leaves an object with an escaped key to the caller, whose answer is the same', () => {
    fc.assert(
      fc.property(values([...plain, ...escaped]), (v) => {
        const text = JSON.stringify(v);
        const sorted = sortKeys(text);
        if (sorted !== null) expect(sorted).toBe(oracle(v));
        expect(canonicalJson(v)).toBe(oracle(v));
        expect(stableDigest(v)).toBe(sha(oracle(v)));
      }),
      {numRuns: 300, seed: 2029},
    );
    expect(sortKeys(JSON.stringify({b: 1, 'a"': 2}))).toBeNull();
    expect(canonicalJson({b: 1, 'a"': 2, 'a\n': 3})).toBe('{"a\\n":3,"a\\"":2,"b":1}');
  });

  it('puts the pairs of UTF-16 before U+E000 and after U+D7FF, where UTF-8 byte order would not', () => {
    const v = {'\uffff': 1, '\u{10000}': 2, '\ue000': 3, '\ud7ff': 4, a: 5};
    expect(sortKeys(JSON.stringify(v))).toBe('{"a":5,"\ud7ff":4,"\u{10000}":2,"\ue000":3,"\uffff":1}');
  });

  it('sorts integer-like keys as text, "__proto__" as any key, and keys that are prefixes of others first', () => {
    const v = objectOf([
      ['b', 1],
      ['10', 2],
      ['9', 3],
      ['__proto__', 4],
      ['ab', 5],
      ['a', 6],
      ['', 7],
    ]);
    expect(canonicalJson(v)).toBe('{"":7,"10":2,"9":3,"__proto__":4,"a":6,"ab":5,"b":1}');
  });

  it('a text measured before it is written (beyond 64 Ki characters) and one nested as deep as allowed', () => {
    const rows = Array.from({length: 3000}, (_, i) => ({z: `row ${i} é`, a: i, m: {y: [i, '\u{1F600}'], b: null}}));
    const wide = {rows, meta: {z: 1, a: 2}};
    expect(JSON.stringify(wide).length).toBeGreaterThan(1 << 16);
    expect(canonicalJson(wide)).toBe(oracle(wide));
    expect(stableDigest(wide)).toBe(sha(oracle(wide)));
    let deep: unknown = {b: 1, a: 2};
    for (let i = 1; i < MAX_DEPTH; i++) deep = i % 2 ? {z: deep, y: i} : [deep, {d: 1, c: 0}];
    expect(canonicalJson(deep)).toBe(oracle(deep));
  });

  it('leaves every value it is given as it was', () => {
    const v = {z: {y: 1, x: [{q: 1, p: 2}]}, a: 'b'};
    const before = JSON.stringify(v);
    canonicalJson(v);
    stableDigest(v);
    expect(JSON.stringify(v)).toBe(before);
    expect(Object.keys(v)).toEqual(['z', 'a']);
  });
});

describe('key order in WebAssembly, room for members', () => {
  it('an object of more members than the first layout holds is sorted by a second run, with the same bytes', () => {
    const entries: Array<[string, unknown]> = Array.from({length: 6000}, (_, i) => [
      `k${String(5999 - i).padStart(5, '0')}`,
      {z: i, a: [i, {y: 1, b: 2}]},
    ]);
    const v = {outer: objectOf(entries), first: objectOf(entries.slice(0, 50))};
    expect(sortKeys(JSON.stringify(v))).toBe(oracle(v));
    expect(stableDigest(v)).toBe(sha(oracle(v)));
  });
});
