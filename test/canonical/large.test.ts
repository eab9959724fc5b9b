import {createHash} from 'node:crypto';
import {describe, expect, it} from '@jest/globals';
import {
  canonicalJson,
  LARGE_STRING,
  prettyJson,
  prettyJsonPieces,
  sha256Hex,
  stableDigest,
  textPieces,
} from '../../src/canonical/index.js';

// A string just over the piecewise threshold, with a surrogate pair straddling every 1 Mi boundary
// and characters JSON must escape.
const piece = 1 << 20;
let big = '';
while (big.length <= LARGE_STRING)
  big +=
    `${'a"\\\t\u00e9'.repeat(Math.floor((piece - 6) / 5))}${'b'.repeat((piece - 1) % 5)}\u{1F600}`.slice(0, piece - 1) +
    '\u{1F600}';
const value = {z: [big, 1.5, null], a: {content: big, key: 'k'}};

describe('very long strings are hashed and written in pieces with the same bytes', () => {
  it('textPieces never splits a surrogate pair and loses nothing', () => {
    const parts = [...textPieces(big)];
    expect(parts.length).toBeGreaterThan(4);
    expect(parts.join('')).toBe(big);
    for (const p of parts) expect(p.isWellFormed()).toBe(true);
  });

  it('stableDigest and sha256Hex equal hashing the whole text at once', () => {
    const whole = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(stableDigest(value)).toBe(whole(canonicalJson(value)));
    expect(sha256Hex(big)).toBe(whole(big));
  });

  it('prettyJsonPieces joins to prettyJson', () => {
    expect([...prettyJsonPieces(value)].join('')).toBe(prettyJson(value));
  });

  it('a lone surrogate in a long string is refused as in a short one', () => {
    expect(() => stableDigest({c: `${big}\ud800`})).toThrow(/lone UTF-16 surrogate/);
  });
});
