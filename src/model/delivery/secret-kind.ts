import {CONFUSABLE_ASCII} from './confusables.generated.js';

/**
 * Full case folding as Unicode's CaseFolding (C+F) defines it, for what these
 * checks need: upper then lower case, one character at a time, except where
 * that round trip and the folding part ways (dotless i stays itself; capital
 * sharp s folds to "ss"). test/model/bootstrap-text.test.ts checks the ASCII
 * letters and digits it leaves against Python's str.casefold for every code
 * point Python knows.
 */
export function caseFold(text: string): string {
  let out = '';
  for (const ch of text) out += ch === '\u0131' ? ch : ch === '\u1e9e' ? 'ss' : ch.toUpperCase().toLowerCase();
  return out;
}

/**
 * Leetspeak: the digits and symbols written for letters. "1", "!" and "|" stand for i or l, which the skeleton does not
 * tell apart.
 */
const LEET: Readonly<Record<string, string>> = {
  '0': 'o',
  '1': 'l',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '@': 'a',
  $: 's',
  '!': 'l',
  '|': 'l',
};

let confusable: Map<string, string> | undefined;
/** Each confusable character, and its case folding, to its ASCII letter or digit (confusables.generated.ts). */
function confusables(): Map<string, string> {
  if (!confusable) {
    confusable = new Map();
    for (const [ascii, chars] of Object.entries(CONFUSABLE_ASCII)) {
      for (const ch of chars) {
        confusable.set(ch, ascii);
        // Its case folding too (Cherokee capitals fold to small letters), never an ASCII letter (long s folds to s).
        const folded = caseFold(ch);
        if (!/^[\x00-\x7f]+$/.test(folded) && !confusable.has(folded)) confusable.set(folded, ascii);
      }
    }
  }
  return confusable;
}

/**
 * What secret markers are looked for in: NFKC and case folding (full-width,
 * mathematical and compatibility letters), then NFKD without combining marks
 * (tȯken, tokén), then each character Unicode's confusables (UTS #39) take to
 * an ASCII letter or digit replaced by it (Greek ο, Cyrillic ѕ and с, dotless
 * ı), folded again, leetspeak read as letters (T0KEN, p@ssword, pa$$word),
 * and only letters and digits kept, with i and l as one letter (1 is either).
 */
export function secretSkeleton(text: string): string {
  const map = confusables();
  const plain = caseFold(text.normalize('NFKC')).normalize('NFKD').replace(/\p{M}/gu, '');
  let out = '';
  for (const ch of plain) {
    for (const c of caseFold(map.get(ch) ?? ch)) {
      const letter = LEET[c] ?? c;
      if (/^[\p{L}\p{N}]$/u.test(letter)) out += letter === 'i' ? 'l' : letter;
    }
  }
  return out;
}

/** Whether `name` names secret material: a marker's skeleton inside the name's. */
export function namesSecret(name: string, markers: readonly string[]): boolean {
  const n = secretSkeleton(name);
  return markers.some((m) => n.includes(secretSkeleton(m)));
}
