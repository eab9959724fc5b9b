import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {
  asciiJson,
  bodyChunks,
  isFormatCharacter,
  isSecretKind,
  normalizeKind,
} from '../../src/model/delivery/bootstrap-text.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {CONFUSABLE_ASCII} from '../../src/model/delivery/confusables.generated.js';
import {secretSkeleton} from '../../src/model/delivery/secret-kind.js';

describe('secret-kind exclusion (B.9): NFKC, full case folding, letters and digits only', () => {
  it.each([
    'ＴＯＫＥＮ',
    'api_key',
    'API.Key',
    'Private-Key',
    'pass.word',
    'access key',
    'Client-Credentials',
    'ſecret',
    'tokenizer-notes',
  ])('excludes %s', (name) => {
    expect(isSecretKind('hints', name)).toBe(true);
    expect(isSecretKind(name, 'notes')).toBe(true);
  });

  it.each(['playbook', 'hints', 'tool_guidance', 'api-docs', 'private notes', 'passage'])('keeps %s', (name) => {
    expect(isSecretKind('hints', name)).toBe(false);
  });

  it("agrees with Python's NFKC + casefold on the ASCII letters and digits every assigned code point leaves", () => {
    const fixture = JSON.parse(
      fs.readFileSync(path.join(PROJECT_ROOT, 'test/fixtures/casefold-ascii.json'), 'utf8'),
    ) as {assigned: Array<[number, number]>; ascii: Array<[number, string]>};
    const want = new Map(fixture.ascii);
    const differ: string[] = [];
    for (const [lo, hi] of fixture.assigned) {
      for (let cp = lo; cp <= hi; cp++) {
        const ours = [...normalizeKind(String.fromCodePoint(cp))].filter((c) => /^[a-z0-9]$/.test(c)).join('');
        if (ours !== (want.get(cp) ?? ''))
          differ.push(`U+${cp.toString(16)}: ${JSON.stringify(ours)} vs ${JSON.stringify(want.get(cp) ?? '')}`);
      }
    }
    expect(differ).toEqual([]);
  });
});

describe(
  'secret-kind exclusion of look-alike names: confusables (UTS ' + '#39), combining marks, leetspeak, common spellings',
  () => {
    // Each names a marker as a reader sees it. Written with escapes where the letter is not what it looks like.
    const lookAlikes: Array<[string, string]> = [
      ['Greek omicron', 't\u03bfken'],
      ['Cyrillic dze', '\u0455ecret'],
      ['Cyrillic es', '\u0441redential'],
      ['dotless i', 'ap\u0131key'],
      ['o with a dot above, precomposed', 't\u022fken'],
      ['o with a combining dot above', 'to\u0307ken'],
      ['e with an acute', 'tok\u00e9n'],
      ['a zero for an o', 'T0KEN'],
      ['passwd', 'passwd'],
      ['an at sign for an a', 'p@ssword'],
      ['dollar signs for s', 'pa$$word'],
      ['fives for s', 'pa55word'],
      ['leet throughout', 'S3CR3T'],
      ['a one for an i', 'pr1vate-key'],
      ['a one for an l', 'credentia1'],
      ['a seven for a t', 'secre7'],
      ['a four for an a', 'p4ssw0rd'],
      ['Cyrillic a and e', '\u0430pi_k\u0435y'],
      ['Cyrillic er and a', '\u0440\u0430ssword'],
      ['Cyrillic byelorussian i', 'pr\u0456vatekey'],
      ['Greek capital iota for an I', 'pr\u0399vatekey'],
      ['full-width', '\uff34\uff2f\uff2b\uff25\uff2e'],
      ['mathematical bold', '\u{1d42d}\u{1d428}\u{1d424}\u{1d41e}\u{1d427}'],
      ['a zero-width space inside', 'to\u200bken'],
      ['a soft hyphen inside', 'access\u00ad_key'],
      ['long s', '\u017fecret'],
      ['Cherokee capital letters tee and ee', '\u13a2ok\u13acn'],
      ['passphrase', 'SSH-Passphrase'],
      ['privkey', 'privkey.pem'],
      ['combining marks over every letter', 's\u0301e\u0302c\u0303r\u0304e\u0306t\u0308'],
    ];
    it.each(lookAlikes)('excludes %s', (_what, name) => {
      expect(isSecretKind('hints', name)).toBe(true);
      expect(isSecretKind(name, 'notes')).toBe(true);
    });

    // Ordinary names that must keep rendering; "pwd" is the shell's print-working-directory, "pass" alone is in passage
    // and compass.
    const ordinary = [
      'playbook',
      'hints',
      'tool_guidance',
      'routing_config',
      'api-docs',
      'private notes',
      'passage',
      'compass',
      'bypass-rules',
      'pwd',
      'passenger',
      'step1-checkout',
      'v4-release-notes',
      'http-404',
      'base64',
      'sha256',
      'ipv4',
      'o365-setup',
      'tokyo-office',
      'scheduling-handbook',
      'credit-card-flow',
      'access-log',
      'keyboard',
      'apis',
      'e2e-tests',
      'utf8',
      'l10n',
      'i18n',
      '\u0434\u043e\u043a\u0443\u043c\u0435\u043d\u0442\u044b',
      '\u03b4\u03bf\u03ba\u03b9\u03bc\u03ae',
    ];
    it.each(ordinary)('keeps %s', (name) => {
      expect(isSecretKind('hints', name)).toBe(false);
      expect(isSecretKind(name, 'notes')).toBe(false);
    });

    it("still excludes what a substring rule excludes: a tokenizer's notes, a secretary's", () => {
      expect(isSecretKind('hints', 'tokenizer-notes')).toBe(true);
      expect(isSecretKind('hints', 'secretary')).toBe(true);
    });

    it(
      'the confusables table maps only to ASCII letters and digits, ' +
        'never an ASCII character, and each entry is one character',
      () => {
        for (const [ascii, chars] of Object.entries(CONFUSABLE_ASCII)) {
          expect(ascii).toMatch(/^[a-z0-9]$/);
          for (const ch of chars) expect([ch, /^[\x00-\x7f]$/.test(ch), [...ch].length]).toEqual([ch, false, 1]);
        }
        expect(secretSkeleton('\u0455\u0441\u03bf\u0131')).toBe('scol');
      },
    );
  },
);

describe('body chunks', () => {
  it("the fixed table of format characters is this engine's \\p{Cf} wherever the engine knows the code point", () => {
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
