import {AutoctxError, fail, isJsonParseError, rethrowUnless} from '../errors.js';
import {MAX_DEPTH, type JsonValue} from './json.js';

/**
 * Walk a parsed JSON value without recursion and reject what canonical JSON
 * rejects: non-finite numbers, unsafe integers, lone surrogates (in keys and
 * values) and nesting deeper than MAX_DEPTH.
 */
export function assertJsonSafe(root: unknown): void {
  if (!jsonSafe(root)) describeUnsafe(root);
}

/** What the walk of a parsed value counts for the duplicate-key check: its members, and the colons of its strings. */
interface Tally {
  members: number;
  colons: number;
}

function colonsIn(s: string): number {
  let n = 0;
  for (let at = s.indexOf(':'); at >= 0; at = s.indexOf(':', at + 1)) n++;
  return n;
}

/** The hot path: the same checks, without building a path for every value. */
function jsonSafe(root: unknown, tally?: Tally): boolean {
  // Two stacks side by side: no pair allocated per value.
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) return false;
    } else if (typeof value === 'string') {
      if (!value.isWellFormed()) return false;
      if (tally) tally.colons += colonsIn(value);
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          values.push(value[i]);
          depths.push(depth + 1);
        }
      } else {
        for (const key in value) {
          if (!Object.hasOwn(value, key)) continue;
          if (!key.isWellFormed()) return false;
          if (tally) {
            tally.members++;
            tally.colons += colonsIn(key);
          }
          values.push((value as Record<string, unknown>)[key]);
          depths.push(depth + 1);
        }
      }
    }
  }
  return true;
}

/**
 * The first key an object of `text` (valid JSON) names twice, with the path of that object; null when there is none.
 * A scan of the text itself: JSON.parse keeps the last of two equal keys and says nothing.
 */
export function duplicateKeyOf(text: string): {key: string; path: string} | null {
  type Frame = {keys: Set<string> | null; path: string; index: number; key: string | null};
  const stack: Frame[] = [];
  const childPath = (top: Frame | undefined): string =>
    top === undefined ? '$' : top.keys === null ? `${top.path}[${top.index}]` : `${top.path}.${top.key}`;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = i + 1;
      while (text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c ? 2 : 1;
      const top = stack.at(-1);
      let next = end + 1;
      while (next < text.length && /\s/.test(text[next]!)) next++;
      if (top?.keys && text.charCodeAt(next) === 0x3a) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return {key, path: top.path};
        top.keys.add(key);
        top.key = key;
      }
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      stack.push({keys: c === 0x7b ? new Set() : null, path: childPath(stack.at(-1)), index: 0, key: null});
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c) {
      const top = stack.at(-1);
      if (top && top.keys === null) top.index++;
    }
  }
  return null;
}

/**
 * Refuse a key named twice in one object of `text` (DUPLICATE_KEY), `tally` being the walk of its parse: its members
 * and the colons of its strings and keys. Outside strings a colon ends each key, so the text's colons are its members
 * written plus the colons of its strings; JSON.parse keeps one member per distinct key. Equal to the members: no
 * duplicate (no colon in a string). Else, less the colons of the parsed strings, equal to the members (exact unless a
 * \u003a escape spells one): no duplicate either; only a document that still does not add up is scanned key by key.
 */
function assertNoDuplicateKey(text: string, tally: Tally): void {
  const colons = colonsIn(text);
  if (colons === tally.members) return;
  if (colons - tally.colons === tally.members && !text.includes('\\u003a') && !text.includes('\\u003A')) return;
  const found = duplicateKeyOf(text);
  if (found)
    fail('DUPLICATE_KEY', `the key "${found.key}" appears twice in the object at ${found.path}`, {
      key: found.key,
      path: found.path,
    });
}

/** Find the first unsafe value again, this time naming its path. */
function describeUnsafe(root: unknown): void {
  const stack: Array<[unknown, string, number]> = [[root, '$', 0]];
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) fail('NON_FINITE_NUMBER', `non-finite number at ${path}`, {path});
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        fail('UNSAFE_INTEGER', `number at ${path} is outside the safe integer range (|x| > 2^53-1)`, {path});
      }
    } else if (typeof value === 'string') {
      if (!value.isWellFormed()) fail('LONE_SURROGATE', `string at ${path} contains a lone UTF-16 surrogate`, {path});
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_DEPTH) fail('NESTING_TOO_DEEP', `nesting deeper than ${MAX_DEPTH} at ${path}`, {path});
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) stack.push([value[i], `${path}[${i}]`, depth + 1]);
      } else {
        for (const [key, item] of Object.entries(value)) {
          if (!key.isWellFormed())
            fail('LONE_SURROGATE', `object key at ${path} contains a lone UTF-16 surrogate`, {path});
          stack.push([item, `${path}.${key}`, depth + 1]);
        }
      }
    }
  }
}

/**
 * Parse JSON text strictly: syntax errors, non-finite or unsafe numbers, lone
 * surrogates and excessive nesting are errors with stable codes. Accepts the
 * reference spelling (no final newline, \u escapes, 1.0).
 */
export function parseJson(text: string): JsonValue {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    rethrowUnless(error, isJsonParseError, (e) => (e as Error | null)?.name === 'RangeError');
    if (error instanceof RangeError) fail('NESTING_TOO_DEEP', 'JSON nesting is too deep to parse');
    fail('INVALID_JSON', `malformed JSON: ${(error as Error).message.replace(/\s+/g, ' ').slice(0, 200)}`);
  }
  const tally: Tally = {members: 0, colons: 0};
  if (!jsonSafe(value, tally)) describeUnsafe(value);
  assertNoDuplicateKey(text, tally);
  return value as JsonValue;
}

const utf8 = new TextDecoder('utf-8', {fatal: true, ignoreBOM: true});

/** Decode bytes as UTF-8, refusing invalid sequences. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch (error) {
    rethrowUnless(error, (e) => (e as NodeJS.ErrnoException | null)?.code === 'ERR_ENCODING_INVALID_ENCODED_DATA');
    fail('INVALID_UTF8', 'content is not valid UTF-8');
  }
}

/** Re-throw an error from parsing with a prefix naming where the text came from. */
export function withOrigin<T>(origin: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof AutoctxError) {
      throw new AutoctxError(error.code, `${origin}: ${error.message}`, {...error.data, file: origin});
    }
    throw error;
  }
}
