import {createHash, hash} from 'node:crypto';
import {fail} from '../errors.js';

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

const PIECE_BYTES = 1 << 18; // room for an escaped piece of text (at most 6 characters per character, \u001f) and for the pieces a document is written in
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
    if (record[key] === undefined || !key.isWellFormed()) fail('INVALID_INPUT', 'an undefined value or a key with a lone UTF-16 surrogate');
    h.update(`${i > 0 ? ',' : ''}${JSON.stringify(key)}:`);
    hashCanonical(record[key], h, depth + 1);
  });
  h.update('}');
}

/** Thrown by the fast encoder for an object it cannot reorder by building a copy (integer-like keys, or "__proto__"). */
const UNORDERABLE = Symbol('unorderable');
const INTEGER_KEY = /^(?:0|[1-9][0-9]*)$/;

/**
 * The value JSON.stringify writes canonically: the value itself when every
 * object is plain with its keys already in UTF-16 order (as parsed canonical
 * files are); otherwise a copy in which each object out of order is rebuilt
 * with its keys inserted in that order (JavaScript enumerates string keys in
 * insertion order), sharing everything that was in order. One pass, no
 * string built. Throws REFUSED for what canonical JSON rejects; LARGE, when
 * `hashing`, for a string long enough to be hashed in pieces; UNORDERABLE for
 * an object out of order whose keys insertion cannot order (integer-like keys
 * are always enumerated first, and "__proto__" cannot be assigned).
 */
function ordered(value: unknown, depth: number, hashing: boolean): unknown {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw REFUSED;
      if (value.length > LARGE_STRING && hashing) throw LARGE;
      return value;
    case 'number':
      if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) throw REFUSED;
      return value;
    case 'boolean':
      return value;
    case 'object': {
      if (value === null) return value;
      if (depth >= MAX_DEPTH) throw REFUSED;
      if (Array.isArray(value)) {
        let copy: unknown[] | null = null;
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          const done = ordered(item, depth + 1, hashing);
          if (copy === null && done !== item) copy = value.slice(0, i);
          if (copy !== null) copy.push(done);
        }
        return copy ?? value;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw REFUSED;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      let inOrder = true;
      // The values as they are to be written, made only once one differs or a key is out of order.
      let values: unknown[] | null = null;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        if (!key.isWellFormed()) throw REFUSED;
        const item = record[key];
        const done = ordered(item, depth + 1, hashing);
        if (i > 0 && inOrder && !(keys[i - 1]! < key)) inOrder = false;
        if (values === null && (done !== item || !inOrder)) {
          values = new Array<unknown>(keys.length);
          for (let j = 0; j < i; j++) values[j] = record[keys[j]!];
        }
        if (values !== null) values[i] = done;
      }
      if (values === null) return value;
      const out: Record<string, unknown> = {};
      if (inOrder) {
        for (let i = 0; i < keys.length; i++) {
          if (keys[i] === '__proto__') throw UNORDERABLE; // an assignment would set the prototype
          out[keys[i]!] = values[i];
        }
        return out;
      }
      const order = orderOf(keys);
      for (let j = 0; j < order.length; j++) out[keys[order[j]!]!] = values[order[j]!];
      return out;
    }
    default:
      throw REFUSED; // undefined, functions, symbols, bigints
  }
}

/**
 * The positions of keys in UTF-16 order. Objects of a few shapes come over
 * and over (rows of a table, and the objects inside them), so the order of
 * each key list is kept, found by its first key and compared key by key.
 */
const orders = new Map<string, Array<{keys: string[]; order: number[]}>>();
let ordersHeld = 0;
function orderOf(keys: string[]): number[] {
  const first = keys[0]!;
  const known = orders.get(first);
  if (known) {
    for (const entry of known) {
      if (entry.keys.length !== keys.length) continue;
      let same = true;
      for (let i = 1; i < keys.length && same; i++) same = keys[i] === entry.keys[i];
      if (same) return entry.order;
    }
  }
  const order = keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
  for (const i of order) if (keys[i] === '__proto__' || INTEGER_KEY.test(keys[i]!)) throw UNORDERABLE;
  if (++ordersHeld > 1024) {
    orders.clear(); // many shapes: start again rather than hold them all
    ordersHeld = 1;
  }
  if (known) {
    if (known.length < 16) known.push({keys, order});
  }
  else orders.set(first, [{keys, order}]);
  return order;
}

/** The hot path: no path strings; one JSON.stringify of the value in canonical key order. */
function fast(value: unknown, hashing = false): string {
  try {
    return JSON.stringify(ordered(value, 0, hashing));
  } catch (error) {
    if (error !== UNORDERABLE) throw error;
  }
  return sorted(value);
}

/** String building with keys sorted (the default sort is UTF-16 code-unit order); values were checked by ordered(). */
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

/** SHA-256 as lowercase hex. crypto.hash (Node ≥ 20.12) is about 4× faster for short inputs; long strings go in pieces. */
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
  let text: string;
  try {
    text = fast(value, true);
  } catch (error) {
    if (error === REFUSED) return sha256Hex(canonicalJson(value)); // names the problem
    if (error !== LARGE) throw error;
    const h = createHash('sha256');
    hashCanonical(value, h, 0);
    return h.digest('hex');
  }
  return sha256Hex(text);
}

/** True when two JSON values have the same canonical form. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
