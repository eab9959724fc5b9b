import {
  LARGE_STRING,
  parseJsonUtf8,
  prettyJson,
  prettyJsonPieces,
  stableDigest,
  type JsonValue,
} from '../canonical/index.js';
import {AutoctxError, fail, isAutoctxError, rethrowUnless, type ErrorCode} from '../errors.js';
import {
  hasCarriageReturn,
  hasConflictMarkers,
  hasConvertedLineEndings,
  lineEndingsError,
  mergeConflictError,
  withLfEndings,
} from './files/checkout-damage.js';
import {
  atomicWrite,
  createImmutable,
  withBytes,
  type RootGuard,
  type WriteData,
  type WriteOptions,
} from './files/fs.js';
import {assertSchema, type SchemaName} from './schemas.js';

/**
 * Read a stored JSON document: UTF-8, strict JSON, its schema, then an optional
 * semantic check. Any failure is CORRUPT_FILE (exit 8) naming the file; the
 * original problem code is kept in data.reason. Returns null when absent.
 */
export function readDocument<T>(
  guard: RootGuard,
  file: string,
  schema: SchemaName | SchemaName[] | ImpliedSchema,
  check?: (value: JsonValue) => T,
): T | null {
  const rel = guard.relative(file);
  try {
    const value = withBytes(guard, file, (bytes) => parseStored(bytes, rel));
    if (value === null) return null;
    if (!Array.isArray(schema) && typeof schema === 'object') return checkImplying(schema, value, rel, check!);
    const schemas = Array.isArray(schema) ? schema : [schema];
    let lastError: unknown;
    for (const name of schemas) {
      try {
        assertSchema(name, value, rel);
        lastError = undefined;
        break;
      } catch (error) {
        rethrowUnless(error, isAutoctxError);
        lastError = error;
      }
    }
    if (lastError) throw lastError;
    return check ? check(value) : (value as T);
  } catch (error) {
    if (!isAutoctxError(error) || PASSED_THROUGH.has(error.code)) throw error;
    const message = error.message.startsWith(rel) ? error.message : `${rel}: ${error.message}`;
    throw new AutoctxError('CORRUPT_FILE', message, {file: rel, reason: error.code});
  }
}

/** What a reader reports as it is: the file is not at fault in itself, the way it reached the disk is. */
const PASSED_THROUGH: ReadonlySet<ErrorCode> = new Set(['UNSAFE_PATH', 'LINE_ENDINGS', 'MERGE_CONFLICT']);

/**
 * Parse a stored document's bytes, telling what a checkout or a merge did to them from an edit: a document whose CRLF
 * line endings, made LF, would parse (git's core.autocrlf) is LINE_ENDINGS, one that does not parse and holds git's
 * conflict markers is MERGE_CONFLICT. autoctx never writes a raw CR in a document, so a document without one costs one
 * scan for it.
 */
function parseStored(bytes: Uint8Array, rel: string): JsonValue {
  if (hasCarriageReturn(bytes) && hasConvertedLineEndings(bytes)) {
    let lf: boolean;
    try {
      parseJsonUtf8(withLfEndings(bytes));
      lf = true;
    } catch (error) {
      rethrowUnless(error, isAutoctxError);
      lf = false;
    }
    if (lf) throw lineEndingsError(rel);
  }
  try {
    return parseJsonUtf8(bytes);
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    if (hasConflictMarkers(bytes)) throw mergeConflictError(rel);
    throw error;
  }
}

/**
 * A schema that the document's check enforces entirely (the manifest's, which
 * validateBundle checks key by key, and more): it is consulted only when the
 * check refuses, so that a document the schema refuses is refused the
 * schema's way, as with any other document, and a valid one is checked once.
 * test/store/implied-schema.test.ts holds the check to that.
 */
export interface ImpliedSchema {
  implied: SchemaName;
}

function checkImplying<T>(schema: ImpliedSchema, value: JsonValue, rel: string, check: (value: JsonValue) => T): T {
  try {
    return check(value);
  } catch (error) {
    assertSchema(schema.implied, value, rel);
    throw error;
  }
}

/** Like readDocument, but absence is an error too. */
export function requireDocument<T>(
  guard: RootGuard,
  file: string,
  schema: SchemaName | SchemaName[] | ImpliedSchema,
  check?: (value: JsonValue) => T,
): T {
  const v = readDocument(guard, file, schema, check);
  if (v === null)
    fail('CORRUPT_FILE', `${guard.relative(file)} is missing`, {file: guard.relative(file), reason: 'MISSING'});
  return v;
}

/** Validate before writing: autoctx never writes a document its own readers would refuse. */
export function serialize(schema: SchemaName, value: unknown, what: string): WriteData {
  assertSchema(schema, value, what);
  // A manifest with a very long component is written in pieces, never as one string.
  if (
    schema === 'manifest' &&
    (value as {components: {content: string}[]}).components.some((c) => c.content.length > LARGE_STRING)
  )
    return () => prettyJsonPieces(value);
  return prettyJson(value);
}

/** Replace a mutable document atomically. */
export function writeDocument(
  guard: RootGuard,
  file: string,
  schema: SchemaName,
  value: unknown,
  options?: WriteOptions,
): void {
  atomicWrite(guard, file, serialize(schema, value, guard.relative(file)), options);
}

/** Create an immutable document; an existing one must be semantically equal. */
export function writeImmutableDocument(
  guard: RootGuard,
  file: string,
  schema: SchemaName,
  value: unknown,
  options?: WriteOptions,
): boolean {
  const text = serialize(schema, value, guard.relative(file));
  return createImmutable(
    guard,
    file,
    text,
    (existing) => {
      try {
        return stableDigest(parseJsonUtf8(existing)) === stableDigest(value); // in pieces for a long text
      } catch (error) {
        rethrowUnless(error, isAutoctxError);
        return false;
      }
    },
    options,
  );
}
