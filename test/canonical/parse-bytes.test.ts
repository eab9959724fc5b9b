import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {decodeUtf8, parseJson} from '../../src/canonical/index.js';
import {parseJsonUtf8} from '../../src/canonical/parse-bytes.js';
import {jsonValues} from '../helpers/arbitraries.js';

// parseJsonUtf8 must be parseJson(decodeUtf8(bytes)) exactly, also when it decodes long strings
// from the bytes. Tiny thresholds here send every literal of 8 bytes or more down that path.
const tiny = {document: 0, literal: 8};

type Outcome = {ok: true; text: string} | {ok: false; code: string};

function outcome(fn: () => unknown): Outcome {
  try {
    // JSON.stringify keeps key order and array holes apart from canonical sorting: the exact shape.
    return {ok: true, text: JSON.stringify(fn())};
  } catch (error) {
    return {ok: false, code: (error as {code?: string}).code ?? String(error)};
  }
}

const reference = (bytes: Uint8Array) => outcome(() => parseJson(decodeUtf8(bytes)));
const bytePath = (bytes: Uint8Array) => outcome(() => parseJsonUtf8(Buffer.from(bytes), tiny));

const text = fc.oneof(
  fc.string({unit: 'grapheme', maxLength: 40}),
  fc.string({unit: 'binary', maxLength: 40}),
  fc.constantFrom(
    '"\\/\b\f\n\r\t\u0000\u001f\u007f',
    '\u2028\u2029',
    '\u{1F600}\u{10FFFF}',
    'é€',
    'a\\"b',
    '\\\\"',
    '',
    '__proto__',
  ),
);

describe('parsing JSON from bytes with long strings decoded in place', () => {
  it('gives the value of parseJson(decodeUtf8(...)), keys in the same order, for any document and spelling', () => {
    const json = jsonValues({text, canonical: false});
    // Spellings JSON.stringify never writes: escaped solidus, \u escapes of any character, upper-case hex.
    const respell = (s: string, how: number) =>
      how === 0
        ? s
        : how === 1
          ? s.replace(/\//g, '\\/')
          : s.replace(/[gkqxz\u00e9\u20ac\u2028\u{1F600}]/gu, (ch) =>
              Array.from(
                {length: ch.length},
                (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0').toUpperCase()}`,
              ).join(''),
            );
    fc.assert(
      fc.property(json, fc.constantFrom(undefined, 2), fc.integer({min: 0, max: 2}), (v, indent, how) => {
        const bytes = Buffer.from(respell(JSON.stringify(v, null, indent), how));
        const want = reference(bytes);
        expect(bytePath(bytes)).toEqual(want);
      }),
      {numRuns: 400, seed: 7},
    );
  });

  it('refuses what the reference refuses: every single-byte change of a document', () => {
    const doc = Buffer.from(
      JSON.stringify(
        {
          a: 'long text "quoted" \\ back\nslash é \u{1F600} \u2028',
          b: [1, 2.5, null, true],
          'key long enough': {c: 'another long string'},
        },
        null,
        1,
      ),
    );
    let refused = 0;
    for (let i = 0; i < doc.length; i++) {
      for (const byte of [0x00, 0x0a, 0x1f, 0x22, 0x5c, 0x75, 0x7d, 0xc3, 0xff, doc[i]! ^ 1]) {
        const copy = Buffer.from(doc);
        copy[i] = byte;
        const want = reference(copy);
        const got = bytePath(copy);
        if (want.ok) expect(got).toEqual(want);
        else {
          refused++;
          expect(got.ok).toBe(false);
        }
      }
    }
    expect(refused).toBeGreaterThan(doc.length);
  });

  it('lone surrogates, raw control characters and bad escapes in a long string are refused with their codes', () => {
    const cases: Array<[string, string]> = [
      ['{"a": "abcdefgh\\ud800xyz"}', 'LONE_SURROGATE'],
      ['{"a": "abcdefgh\\udc00\\ud800"}', 'LONE_SURROGATE'],
      ['{"a": "abcdefgh\u0001xyz"}', 'INVALID_JSON'],
      ['{"a": "abcdefgh\\xyz"}', 'INVALID_JSON'],
      ['{"a": "abcdefgh\\u12g4"}', 'INVALID_JSON'],
      ['{"a": "abcdefgh\\u12"}', 'INVALID_JSON'],
      ['{"a": "abcdefgh" "b"}', 'INVALID_JSON'],
      ['{"a": "abcdefghij', 'INVALID_JSON'],
    ];
    for (const [doc, code] of cases) {
      expect([doc, bytePath(Buffer.from(doc))]).toEqual([doc, {ok: false, code}]);
      expect([doc, reference(Buffer.from(doc))]).toEqual([doc, {ok: false, code}]);
    }
    expect(bytePath(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))).toEqual({
      ok: false,
      code: 'INVALID_UTF8',
    });
  });

  it(
    'a long key is an own property in its place; a long key ' + 'named twice is refused, as the short path refuses it',
    () => {
      const doc = '{"z": 1, "a long key here": 2, "__proto__": {"x": "long enough value"}}';
      const got = parseJsonUtf8(Buffer.from(doc), tiny) as Record<string, unknown>;
      expect(Object.keys(got)).toEqual(['z', 'a long key here', '__proto__']);
      expect(got['a long key here']).toBe(2);
      expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
      expect(bytePath(Buffer.from(doc))).toEqual(reference(Buffer.from(doc)));
      const twice = Buffer.from(doc.replace('}}', '}, "a long key here": 3}'));
      expect(() => parseJsonUtf8(Buffer.from(twice), tiny)).toThrow(expect.objectContaining({code: 'DUPLICATE_KEY'}));
      expect(() => parseJsonUtf8(Buffer.from(twice))).toThrow(expect.objectContaining({code: 'DUPLICATE_KEY'}));
    },
  );
});
