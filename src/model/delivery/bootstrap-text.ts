/**
 * Text rules of the bootstrap package (spec 002, reference B.8 and B.9):
 * how a body becomes indivisible chunks, how a kind or key is normalized to
 * find secret markers, and how a citation's strings are quoted. Pure, and
 * the same bytes on every machine: the format characters are a fixed table
 * (Unicode 17.0, general category Cf), not the running engine's idea of them.
 */
import {caseFold, namesSecret} from './secret-kind.js';

/** Unicode 17.0 general category Cf, as inclusive ranges. Cc is U+0000–U+001F and U+007F–U+009F. */
const FORMAT_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0xad, 0xad],
  [0x600, 0x605],
  [0x61c, 0x61c],
  [0x6dd, 0x6dd],
  [0x70f, 0x70f],
  [0x890, 0x891],
  [0x8e2, 0x8e2],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x206f],
  [0xfeff, 0xfeff],
  [0xfff9, 0xfffb],
  [0x110bd, 0x110bd],
  [0x110cd, 0x110cd],
  [0x13430, 0x1343f],
  [0x1bca0, 0x1bca3],
  [0x1d173, 0x1d17a],
  [0xe0001, 0xe0001],
  [0xe0020, 0xe007f],
];

export function isFormatCharacter(cp: number): boolean {
  // Most text (Latin, CJK, Hangul, emoji) lies in gaps of the table.
  if (cp < 0xad || (cp > 0x206f && cp < 0xfeff) || (cp > 0xfffb && cp < 0x110bd) || (cp > 0x1d17a && cp < 0xe0001))
    return false;
  for (const [lo, hi] of FORMAT_RANGES) {
    if (cp < lo) return false;
    if (cp <= hi) return true;
  }
  return false;
}

function isControl(cp: number): boolean {
  return cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f);
}

/** A code point's visible escape: \uXXXX (four lowercase hex digits) up to U+FFFF, else \UXXXXXXXX. */
function escapeCodePoint(cp: number): string {
  return cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
}

/** A body split into indivisible pieces, with their UTF-8 sizes and whether each is a line break. */
export interface Chunks {
  readonly text: readonly string[];
  readonly bytes: readonly number[];
}

function utf8Size(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/**
 * Normalize a body into chunks: CRLF, a lone CR, U+2028 and U+2029 become
 * LF; every other control or format character, and a lone surrogate,
 * becomes its visible escape. Each code point (or escape) is one chunk, so a
 * cut between chunks falls on a character boundary and never inside an
 * escape, and the result is always well-formed UTF-8.
 */
export function bodyChunks(body: string): Chunks {
  const text: string[] = [];
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    let cp = body.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < body.length) {
      const lo = body.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    if (cp === 0x0d) {
      if (body.charCodeAt(i + 1) === 0x0a) i++;
      cp = 0x0a;
    } else if (cp === 0x2028 || cp === 0x2029) cp = 0x0a;
    if (cp === 0x0a) {
      text.push('\n');
      bytes.push(1);
    } else if ((cp >= 0xd800 && cp <= 0xdfff) || isControl(cp) || isFormatCharacter(cp)) {
      const e = escapeCodePoint(cp);
      text.push(e);
      bytes.push(e.length);
    } else {
      text.push(cp > 0xffff ? body.slice(i - 1, i + 1) : body[i]!);
      bytes.push(utf8Size(cp));
    }
  }
  return {text, bytes};
}

/**
 * Markers of secret material, matched as substrings of the kind's and key's skeletons (B.9, v2; secret-kind.ts):
 * with the common spellings passwd, passphrase and privkey. Not pwd (also the shell's print-working-directory,
 * a tool's name) and not pass alone (passage, compass, bypass).
 */
export const SECRET_MARKERS = [
  'secret',
  'credential',
  'password',
  'passwd',
  'passphrase',
  'token',
  'apikey',
  'accesskey',
  'privatekey',
  'privkey',
] as const;

/** NFKC, then full case folding, then only letters and digits: what secret markers are looked for in. */
export function normalizeKind(text: string): string {
  const folded = caseFold(text.normalize('NFKC')).normalize('NFKC');
  let out = '';
  for (const ch of folded) if (/^[\p{L}\p{N}]$/u.test(ch)) out += ch;
  return out;
}

/**
 * Whether a component's kind or key names secret material (so it is never rendered or recalled): secret-kind.ts says
 * how names are read.
 */
export function isSecretKind(...names: string[]): boolean {
  return names.some((name) => namesSecret(name, SECRET_MARKERS));
}

/** A JSON string with every character outside printable ASCII escaped: citations read the same in any terminal. */
export function asciiJson(text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
