import {isUtf8} from 'node:buffer';
import {randomBytes} from 'node:crypto';
import {fail} from '../errors.js';
import {type JsonValue} from './json.js';
import {assertJsonSafe, decodeUtf8, parseJson} from './parse.js';

/** Documents from this size on are parsed from their bytes, with their long strings decoded in place. */
export const LARGE_DOCUMENT = 8 << 20;
/** A string literal of at least this many bytes is decoded straight from the document's bytes. */
export const LARGE_LITERAL = 1 << 20;

/**
 * Parse UTF-8 JSON bytes: parseJson(decodeUtf8(bytes)), with the same result
 * and the same error codes, but without ever holding the document as one
 * string beside its parsed value. A large document's long string literals are
 * unescaped in place in `bytes` (which this call may overwrite) and decoded
 * from there; the rest, with a placeholder for each, goes to JSON.parse. So a
 * manifest with a 100 MB component needs its bytes and the component's text,
 * not also the whole text of the file (for text beyond Latin-1, which V8 holds
 * at two bytes a character, that text alone is twice the file).
 */
export function parseJsonUtf8(
  bytes: Uint8Array,
  sizes = {document: LARGE_DOCUMENT, literal: LARGE_LITERAL},
): JsonValue {
  if (bytes.length < sizes.document) return parseJson(decodeUtf8(bytes));
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!isUtf8(buf)) fail('INVALID_UTF8', 'content is not valid UTF-8');
  const literals = longLiterals(buf, sizes.literal);
  if (literals.length === 0) return parseJson(buf.toString('utf8'));
  // The structure first, so that a syntax error outside the long strings is reported as JSON.parse reports it.
  const nonce = `\u0000autoctx-long-string-${randomBytes(8).toString('hex')}-`;
  const parts: Buffer[] = [];
  let at = 0;
  literals.forEach(([open, close], i) => {
    parts.push(buf.subarray(at, open), Buffer.from(JSON.stringify(`${nonce}${i}`)));
    at = close + 1;
  });
  parts.push(buf.subarray(at));
  let value = parseJson(Buffer.concat(parts).toString('utf8'));
  const texts = literals.map(([open, close]) => unescapeInPlace(buf, open + 1, close));
  value = substitute(value, nonce, texts);
  assertJsonSafe(value);
  return value;
}

/** [opening quote, closing quote] of every string literal of at least `min` bytes, in order. */
function longLiterals(buf: Buffer, min: number): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  // Outside string literals, valid JSON has no quote: each quote after a literal opens the next one.
  for (let from = 0; ; ) {
    const open = buf.indexOf(0x22, from);
    if (open < 0) return found;
    let close = -1;
    for (let q = open + 1; ; ) {
      const n = buf.indexOf(0x22, q);
      if (n < 0) break;
      let slashes = 0;
      while (n - 1 - slashes > open && buf[n - 1 - slashes] === 0x5c) slashes++;
      if (slashes % 2 === 0) {
        close = n;
        break;
      }
      q = n + 1;
    }
    if (close < 0) return found; // unterminated: JSON.parse of the rest reports it
    if (close - open - 1 >= min) found.push([open, close]);
    from = close + 1;
  }
}

const SIMPLE_ESCAPES: Record<number, number> = {
  0x22: 0x22,
  0x5c: 0x5c,
  0x2f: 0x2f,
  0x62: 0x08,
  0x66: 0x0c,
  0x6e: 0x0a,
  0x72: 0x0d,
  0x74: 0x09,
};

function hex4(buf: Buffer, at: number, end: number): number {
  if (at + 4 > end) fail('INVALID_JSON', 'malformed JSON: bad \\u escape in a long string');
  let v = 0;
  for (let i = at; i < at + 4; i++) {
    const c = buf[i]!;
    const d =
      c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) fail('INVALID_JSON', 'malformed JSON: bad \\u escape in a long string');
    v = v * 16 + d;
  }
  return v;
}

/**
 * The text of the literal body buf[start, end): escapes resolved into UTF-8 in
 * place (never longer than their spelling), then decoded once. Refuses what
 * JSON.parse refuses (raw control characters, unknown escapes) and, as
 * canonical JSON does, lone surrogates.
 */
function unescapeInPlace(buf: Buffer, start: number, end: number): string {
  let w = start;
  let lone = false;
  for (let r = start; r < end; ) {
    const c = buf[r]!;
    if (c !== 0x5c) {
      if (c < 0x20) fail('INVALID_JSON', 'malformed JSON: a control character in a long string');
      buf[w++] = c;
      r++;
      continue;
    }
    const e = r + 1 < end ? buf[r + 1]! : -1;
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      buf[w++] = simple;
      r += 2;
      continue;
    }
    if (e !== 0x75) fail('INVALID_JSON', 'malformed JSON: bad escape in a long string');
    let cp = hex4(buf, r + 2, end);
    r += 6;
    if (cp >= 0xd800 && cp <= 0xdbff && r + 1 < end && buf[r] === 0x5c && buf[r + 1] === 0x75) {
      const low = hex4(buf, r + 2, end);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        r += 6;
      }
    }
    if (cp >= 0xd800 && cp <= 0xdfff) {
      lone = true; // reported once the whole literal is known to be valid JSON
      continue;
    }
    if (cp < 0x80) buf[w++] = cp;
    else if (cp < 0x800) {
      buf[w++] = 0xc0 | (cp >> 6);
      buf[w++] = 0x80 | (cp & 0x3f);
    } else if (cp < 0x10000) {
      buf[w++] = 0xe0 | (cp >> 12);
      buf[w++] = 0x80 | ((cp >> 6) & 0x3f);
      buf[w++] = 0x80 | (cp & 0x3f);
    } else {
      buf[w++] = 0xf0 | (cp >> 18);
      buf[w++] = 0x80 | ((cp >> 12) & 0x3f);
      buf[w++] = 0x80 | ((cp >> 6) & 0x3f);
      buf[w++] = 0x80 | (cp & 0x3f);
    }
  }
  if (lone) fail('LONE_SURROGATE', 'a long string contains a lone UTF-16 surrogate');
  return buf.toString('utf8', start, w);
}

/** The parsed value with each placeholder string (value or key) replaced by its text. */
function substitute(value: JsonValue, nonce: string, texts: string[]): JsonValue {
  const real = (s: string): string => (s.startsWith(nonce) ? texts[Number(s.slice(nonce.length))]! : s);
  const visit = (v: JsonValue): JsonValue => {
    if (typeof v === 'string') return real(v);
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = visit(v[i]!);
      return v;
    }
    const keys = Object.keys(v);
    if (!keys.some((k) => k.startsWith(nonce))) {
      for (const k of keys) v[k] = visit(v[k]!);
      return v;
    }
    // A long key: rebuild in order, as JSON.parse would have built it (own properties, the last duplicate winning).
    const out: Record<string, JsonValue> = {};
    for (const k of keys) {
      if (Object.hasOwn(out, real(k)))
        fail('DUPLICATE_KEY', `the key "${real(k).slice(0, 80)}…" appears twice in one object`, {
          key: real(k).slice(0, 80),
        });
      Object.defineProperty(out, real(k), {value: visit(v[k]!), writable: true, enumerable: true, configurable: true});
    }
    return out;
  };
  return visit(value);
}
