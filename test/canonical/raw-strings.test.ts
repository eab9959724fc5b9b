import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {rawLiteralsOf} from '../../src/canonical/raw-strings.js';

// rawLiteralsOf scans a document sixteen bytes at a time (literal-scan.wat). Held here to a
// byte-at-a-time reading of the same rule: every literal in JSON.stringify's spelling, no control
// character but a line feed between tokens, valid UTF-8; the values of `key` found by their key.

const SHORT = new Set(['"', '\\', 'b', 'f', 'n', 'r', 't']);
const U_ALLOWED = new Set(
  Array.from({length: 32}, (_, c) => c)
    .filter((c) => ![8, 9, 10, 12, 13].includes(c))
    .map((c) => c.toString(16).padStart(4, '0')),
);

function reference(bytes: Buffer, key: string): {literals: Array<[number, number]>; skeleton: string} | null {
  const utf8 = new TextDecoder('utf-8', {fatal: true});
  try {
    utf8.decode(bytes);
  } catch {
    return null;
  }
  const all: Array<[number, number]> = [];
  let i = 0;
  while (i < bytes.length) {
    const c = bytes[i]!;
    if (c === 0x22) {
      const start = i++;
      for (;;) {
        if (i >= bytes.length) return null;
        const d = bytes[i]!;
        if (d < 0x20) return null;
        if (d === 0x22) break;
        if (d === 0x5c) {
          const e = String.fromCharCode(bytes[i + 1] ?? 0);
          if (SHORT.has(e)) i += 2;
          else if (e === 'u' && U_ALLOWED.has(bytes.toString('latin1', i + 2, i + 6))) i += 6;
          else return null;
        } else i++;
      }
      all.push([start, ++i]);
    } else if (c === 0x5c || (c < 0x20 && c !== 0x0a)) return null;
    else i++;
  }
  const name = JSON.stringify(key);
  const literals: Array<[number, number]> = [];
  for (let k = 0; k < all.length; k++) {
    const [s, e] = all[k]!;
    if (bytes.toString('latin1', s, e) !== name) continue;
    const rest = bytes.toString('latin1', e);
    const m = /^[ \n\r\t]*:[ \n\r\t]*/.exec(rest);
    if (!m) continue;
    const at = e + m[0].length;
    if (all[k + 1]?.[0] !== at) return null;
    literals.push(all[k + 1]!);
    k++;
  }
  let skeleton = '';
  let from = 0;
  for (const [s, e] of literals) {
    skeleton += `${bytes.toString('utf8', from, s)}""`;
    from = e;
  }
  return {literals, skeleton: skeleton + bytes.toString('utf8', from)};
}

const controls = Array.from({length: 32}, (_, c) => String.fromCharCode(c));
const piece = fc.oneof(
  fc.string({unit: 'grapheme-ascii', maxLength: 40}),
  fc.constantFrom(...controls, '"', '\\', '/', '\u007f', 'é', '\u{1F600}', '\u2028', 'x'.repeat(15), 'y'.repeat(17)),
);
const text = fc.array(piece, {maxLength: 8}).map((p) => p.join(''));
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    {depthSize: 'small'},
    text,
    fc.integer(),
    fc.constant(null),
    fc.array(tie('v'), {maxLength: 4}),
    fc.dictionary(fc.oneof(fc.constant('content'), text), tie('v'), {maxKeys: 4}),
  ),
})).v;

describe('rawLiteralsOf', () => {
  it('finds what a byte-at-a-time scan finds, in compact and pretty spellings, across the 16-byte blocks', () => {
    fc.assert(
      fc.property(value, fc.nat(31), (v, pad) => {
        for (const spelling of [
          JSON.stringify(v),
          JSON.stringify(v, null, 2),
          `${' '.repeat(pad)}${JSON.stringify({content: v})}`,
        ]) {
          if (spelling === undefined) continue;
          const bytes = Buffer.from(spelling, 'utf8');
          expect(rawLiteralsOf(bytes, 'content')).toEqual(reference(bytes, 'content'));
        }
      }),
      {numRuns: 2000, seed: 2030},
    );
  });

  it('refuses what JSON.stringify does not write, and a control character where it does not belong', () => {
    const doc = (literal: string) => Buffer.from(`{"content": "${literal}", "n": 1}`, 'latin1');
    for (const bad of ['\\/', '\\u0041', '\\u001F', '\\u0008', '\\u000a', '\\x', '\\', '\t', '\u0001', 'a\nb'])
      expect([bad, rawLiteralsOf(doc(bad), 'content')]).toEqual([bad, null]);
    for (const good of [
      '\\b',
      '\\f',
      '\\n',
      '\\r',
      '\\t',
      '\\"',
      '\\\\',
      '\\u0000',
      '\\u0007',
      '\\u000b',
      '\\u000e',
      '\\u000f',
      '\\u0010',
      '\\u001f',
    ])
      expect([good, rawLiteralsOf(doc(good), 'content')?.literals]).toEqual([good, [[12, 14 + good.length]]]);
    // a tab between tokens: not autoctx's spelling
    expect(rawLiteralsOf(Buffer.from('{"content":\t"x"}'), 'content')).toBeNull();
    expect(rawLiteralsOf(Buffer.from('{"content":"x'), 'content')).toBeNull(); // unclosed
    expect(rawLiteralsOf(Buffer.from('{"content":\\"x"}'), 'content')).toBeNull(); // a backslash outside a literal
    expect(rawLiteralsOf(Buffer.from([0x7b, 0x22, 0xc3, 0x22, 0x7d]), 'content')).toBeNull(); // invalid UTF-8
    // not a string: the general path says so
    expect(rawLiteralsOf(Buffer.from('{"content": 1}'), 'content')).toBeNull();
  });

  it('finds every literal however they fall against the blocks (an escape split across two)', () => {
    for (let pad = 0; pad < 40; pad++) {
      const body = `${'a'.repeat(pad)}\\"${'b'.repeat(pad % 17)}\\\\\\u001f`;
      const bytes = Buffer.from(`{"k": "${'z'.repeat(pad)}", "content": "${body}"}`);
      const r = rawLiteralsOf(bytes, 'content');
      expect(r?.literals).toEqual([[bytes.length - body.length - 3, bytes.length - 1]]);
      expect(r?.skeleton).toBe(`{"k": "${'z'.repeat(pad)}", "content": ""}`);
    }
  });
});
