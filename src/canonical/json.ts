import {createHash, hash} from 'node:crypto';
import {fail} from '../errors.js';
import {sortKeys, sortKeysDigest} from './key-order.js';

/** Any JSON value autoctx hashes or stores. */
export type JsonValue = null | boolean | number | string | JsonValue[] | {[key: string]: JsonValue};
export type JsonObject = {[key: string]: JsonValue};

/** Deepest nesting accepted anywhere; far beyond any real file, far below the stack limit. */
export const MAX_DEPTH = 256;

function checkNumber(value: number, path: string): void {
  if (!Number.isFinite(value)) fail('NON_FINITE_NUMBER', `non-finite number at ${path}`, {path});
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    fail('UNSAFE_INTEGER', `number at ${path} is outside the safe integer range (|x| > 2^53-1)`, {path});
  }
}

function checkString(value: string, path: string, what: string): void {
  if (!value.isWellFormed()) fail('LONE_SURROGATE', `${what} at ${path} contains a lone UTF-16 surrogate`, {path});
}

/** UTF-16 code-unit order, as JavaScript's default string comparison. */
export function compareUtf16(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function encode(value: unknown, path: string, depth: number, out: string[]): void {
  if (value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'number':
      checkNumber(value, path);
      out.push(JSON.stringify(value));
      return;
    case 'string':
      checkString(value, path, 'string');
      out.push(JSON.stringify(value));
      return;
    case 'object':
      break;
    default:
      fail('INVALID_INPUT', `value of type ${typeof value} at ${path} cannot be represented in canonical JSON`, {path});
  }
  if (depth >= MAX_DEPTH) fail('NESTING_TOO_DEEP', `nesting deeper than ${MAX_DEPTH} at ${path}`, {path});
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      encode(value[i], `${path}[${i}]`, depth + 1, out);
    }
    out.push(']');
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    fail('INVALID_INPUT', `value at ${path} is not a plain JSON object`, {path});
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(compareUtf16);
  out.push('{');
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) fail('INVALID_INPUT', `undefined value at ${path}.${key}`, {path});
    checkString(key, path, 'object key');
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(key), ':');
    encode(item, `${path}.${key}`, depth + 1, out);
  }
  out.push('}');
}

/** Thrown by the fast encoder; the careful one then runs again to name the problem and its path. */
const REFUSED = Symbol('refused');
/** Thrown by the fast encoder when hashing meets a string so long that it is hashed in pieces instead. */
const LARGE = Symbol('large');
/** Strings longer than this (in UTF-16 code units) are escaped and hashed in pieces when a digest is taken. */
export const LARGE_STRING = 1 << 22;
const PIECE = 1 << 14;

/** A long text in pieces of at most 16 Ki code units that never split a surrogate pair. */
export function* textPieces(text: string, size = PIECE): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield text.slice(start, end);
    start = end;
  }
}

// room for an escaped piece of text (at most 6 characters per character, \u001f) and for the pieces a document is
// written in
const PIECE_BYTES = 1 << 18;
let pieceBuffer: Buffer | undefined;

/**
 * A piece of text as UTF-8, in one buffer reused from call to call (valid
 * until the next call): hashing or writing a long text piece by piece then
 * allocates nothing per piece, so its garbage does not pile up.
 */
export function utf8Piece(text: string): Uint8Array {
  if (text.length * 3 > PIECE_BYTES) return Buffer.from(text, 'utf8');
  pieceBuffer ??= Buffer.allocUnsafe(PIECE_BYTES);
  return pieceBuffer.subarray(0, pieceBuffer.write(text, 0, 'utf8'));
}

/**
 * The canonical JSON of a value fed to a hash piece by piece: equal bytes to
 * canonicalJson, without holding the whole text (nor an escaped copy of a long
 * string) in memory at once.
 */
function hashCanonical(value: unknown, h: ReturnType<typeof createHash>, depth: number): void {
  if (typeof value === 'string' && value.length > LARGE_STRING) {
    if (!value.isWellFormed()) fail('INVALID_INPUT', 'a long string contains a lone UTF-16 surrogate');
    h.update('"');
    for (const piece of textPieces(value)) h.update(utf8Piece(JSON.stringify(piece).slice(1, -1)));
    h.update('"');
    return;
  }
  if (value === null || typeof value !== 'object') {
    h.update(canonicalJson(value));
    return;
  }
  if (depth >= MAX_DEPTH) fail('NESTING_TOO_DEEP', `nesting deeper than ${MAX_DEPTH}`);
  if (Array.isArray(value)) {
    h.update('[');
    value.forEach((item, i) => {
      if (i > 0) h.update(',');
      hashCanonical(item, h, depth + 1);
    });
    h.update(']');
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) fail('INVALID_INPUT', 'a value is not a plain JSON object');
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(compareUtf16);
  h.update('{');
  keys.forEach((key, i) => {
    if (record[key] === undefined || !key.isWellFormed())
      fail('INVALID_INPUT', 'an undefined value or a key with a lone UTF-16 surrogate');
    h.update(`${i > 0 ? ',' : ''}${JSON.stringify(key)}:`);
    hashCanonical(record[key], h, depth + 1);
  });
  h.update('}');
}

/**
 * Checks a value for canonical JSON in one pass, building nothing: every
 * object plain, every number finite and every integer safe, every string and
 * key well formed, nesting within MAX_DEPTH. Returns whether every object's
 * keys are already in UTF-16 order (as in parsed canonical files), when
 * JSON.stringify's text of the value is its canonical JSON. Throws REFUSED
 * for what canonical JSON rejects, and LARGE, when `hashing`, for a string
 * long enough to be hashed in pieces.
 */
function inKeyOrder(value: unknown, depth: number, hashing: boolean): boolean {
  visited++;
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw REFUSED;
      if (value.length > LARGE_STRING && hashing) throw LARGE;
      return true;
    case 'number':
      if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) throw REFUSED;
      return true;
    case 'boolean':
      return true;
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_DEPTH) throw REFUSED;
      let inOrder = true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!inKeyOrder(value[i], depth + 1, hashing)) inOrder = false;
        return inOrder;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw REFUSED;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        if (!key.isWellFormed()) throw REFUSED;
        if (i > 0 && !(keys[i - 1]! < key)) inOrder = false;
        if (!inKeyOrder(record[key], depth + 1, hashing)) inOrder = false;
      }
      return inOrder;
    }
    default:
      throw REFUSED; // undefined, functions, symbols, bigints
  }
}

/** Values and members inKeyOrder has visited since it was last reset. */
let visited = 0;

/**
 * Values out of order of at least this many values and members are sorted by
 * key-order.ts; smaller ones are written again with their keys sorted, which
 * costs about as much for them and spares a short-lived process (a hook)
 * compiling the module (about 1 ms).
 */
const SORT_IN_MEMORY = 256;

/**
 * The hot path: one check of the value, then JSON.stringify of the value
 * itself. When some object is out of key order, the text's members are put
 * in order by key-order.ts; for a short text, or if that cannot (a key with
 * an escape), the value is written again with its keys sorted.
 */
function fast(value: unknown): string {
  visited = 0;
  if (inKeyOrder(value, 0, false)) return JSON.stringify(value);
  return (visited >= SORT_IN_MEMORY ? sortKeys(JSON.stringify(value)) : null) ?? sorted(value);
}

/**
 * String building with keys sorted (the default sort is UTF-16 code-unit order); values were checked by inKeyOrder().
 */
function sorted(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let s = '[';
    for (let i = 0; i < value.length; i++) s += (i === 0 ? '' : ',') + sorted(value[i]);
    return `${s}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let s = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    s += `${i === 0 ? '' : ','}${JSON.stringify(key)}:${sorted(record[key])}`;
  }
  return `${s}}`;
}

/**
 * Canonical JSON: keys sorted by UTF-16 code units, no whitespace, ECMAScript
 * number spelling; rejects non-finite numbers, integers beyond ±(2^53−1) and
 * lone surrogates. Equal to the reference implementation byte for byte.
 */
export function canonicalJson(value: unknown): string {
  try {
    return fast(value);
  } catch (error) {
    if (error !== REFUSED) throw error;
  }
  const out: string[] = [];
  encode(value, '$', 0, out);
  return out.join('');
}

/**
 * SHA-256 as lowercase hex. crypto.hash (Node ≥ 20.12) is about 4× faster for short inputs; long strings go in pieces.
 */
export function sha256Hex(data: string | Uint8Array): string {
  if (typeof data === 'string' && data.length <= LARGE_STRING) return hash('sha256', data, 'hex');
  const h = createHash('sha256');
  // Pieces of 1 Mi code units: few calls, and at most 3 MiB of UTF-8 at a time.
  if (typeof data === 'string') for (const piece of textPieces(data, 1 << 20)) h.update(piece, 'utf8');
  else h.update(data);
  return h.digest('hex');
}

/** SHA-256 of the UTF-8 bytes of the canonical JSON, as bare lowercase hex. */
export function stableDigest(value: unknown): string {
  let inOrder: boolean;
  visited = 0;
  try {
    inOrder = inKeyOrder(value, 0, true);
  } catch (error) {
    if (error === REFUSED) return sha256Hex(canonicalJson(value)); // names the problem
    if (error !== LARGE) throw error;
    const h = createHash('sha256');
    hashCanonical(value, h, 0);
    return h.digest('hex');
  }
  if (inOrder) return sha256Hex(JSON.stringify(value));
  return (visited >= SORT_IN_MEMORY ? sortKeysDigest(JSON.stringify(value)) : null) ?? sha256Hex(sorted(value));
}

/** True when two JSON values have the same canonical form. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return sameValue(a, b, 0) || canonicalJson(a) === canonicalJson(b);
}

/**
 * True when a and b are the same value in every respect canonical JSON writes, each one it accepts (the checks of
 * inKeyOrder): then their canonical forms are equal without writing them. False otherwise, also for a value canonical
 * JSON refuses, so that jsonEqual writes both and fails as canonicalJson does.
 */
function sameValue(a: unknown, b: unknown, depth: number): boolean {
  switch (typeof a) {
    case 'string':
      return a === b && a.isWellFormed();
    case 'number':
      return a === b && Number.isFinite(a) && (!Number.isInteger(a) || Number.isSafeInteger(a));
    case 'boolean':
      return a === b;
    case 'object': {
      if (a === null || b === null) return a === b;
      if (typeof b !== 'object' || depth >= MAX_DEPTH) return false;
      if (Array.isArray(a)) {
        if (!Array.isArray(b) || a.length !== b.length) return false;
        for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i], depth + 1)) return false;
        return true;
      }
      if (Array.isArray(b) || !plainObject(a) || !plainObject(b)) return false;
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      const keys = Object.keys(x);
      if (keys.length !== Object.keys(y).length) return false;
      for (const key of keys)
        if (!Object.hasOwn(y, key) || !key.isWellFormed() || !sameValue(x[key], y[key], depth + 1)) return false;
      return true;
    }
    default:
      return false; // undefined, functions, symbols, bigints: canonical JSON refuses them
  }
}

function plainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
