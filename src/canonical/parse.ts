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

/** The hot path: the same checks, without building a path for every value. */
function jsonSafe(root: unknown): boolean {
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) return false;
    } else if (typeof value === 'string') {
      if (!value.isWellFormed()) return false;
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) stack.push([value[i], depth + 1]);
      } else {
        for (const key in value) {
          if (!Object.hasOwn(value, key)) continue;
          if (!key.isWellFormed()) return false;
          stack.push([(value as Record<string, unknown>)[key], depth + 1]);
        }
      }
    }
  }
  return true;
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
  assertJsonSafe(value);
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
