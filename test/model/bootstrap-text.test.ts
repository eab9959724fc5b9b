import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {asciiJson, bodyChunks, isFormatCharacter, isSecretKind, normalizeKind} from '../../src/model/bootstrap-text.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

describe('secret-kind exclusion (B.9): NFKC, full case folding, letters and digits only', () => {
  it.each(['ＴＯＫＥＮ', 'api_key', 'API.Key', 'Private-Key', 'pass.word', 'access key', 'Client-Credentials', 'ſecret', 'tokenizer-notes'])('excludes %s', (name) => {
    expect(isSecretKind('hints', name)).toBe(true);
    expect(isSecretKind(name, 'notes')).toBe(true);
  });

  it.each(['playbook', 'hints', 'tool_guidance', 'api-docs', 'private notes', 'passage'])('keeps %s', (name) => {
    expect(isSecretKind('hints', name)).toBe(false);
  });

  it('agrees with Python\'s NFKC + casefold on the ASCII letters and digits every assigned code point leaves', () => {
    const fixture = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'test/fixtures/casefold-ascii.json'), 'utf8')) as {assigned: Array<[number, number]>; ascii: Array<[number, string]>};
    const want = new Map(fixture.ascii);
    const differ: string[] = [];
    for (const [lo, hi] of fixture.assigned) {
      for (let cp = lo; cp <= hi; cp++) {
        const ours = [...normalizeKind(String.fromCodePoint(cp))].filter((c) => /^[a-z0-9]$/.test(c)).join('');
        if (ours !== (want.get(cp) ?? '')) differ.push(`U+${cp.toString(16)}: ${JSON.stringify(ours)} vs ${JSON.stringify(want.get(cp) ?? '')}`);
      }
    }
    expect(differ).toEqual([]);
  });
});

describe('body chunks', () => {
  it('the fixed table of format characters is this engine\'s \\p{Cf} wherever the engine knows the code point', () => {
    const mismatched: number[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      if (/^\p{Cn}$/u.test(ch)) continue;
      if (/^\p{Cf}$/u.test(ch) !== isFormatCharacter(cp)) mismatched.push(cp);
    }
    expect(mismatched).toEqual([]);
  });

  it('sizes each chunk by its UTF-8 bytes', () => {
    const c = bodyChunks('aé統🚀\u0007');
    expect(c.text).toEqual(['a', 'é', '統', '🚀', '\\u0007']);
    expect(c.bytes).toEqual([1, 2, 3, 4, 6]);
  });

  it('quotes citations as ASCII JSON', () => {
    expect(asciiJson('clé "x"\n')).toBe('"cl\\u00e9 \\"x\\"\\n"');
    expect(asciiJson('🚀')).toBe('"\\ud83d\\ude80"');
  });
});
