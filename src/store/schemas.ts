import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {fail} from '../errors.js';
import validators, {type CompiledValidator} from './validators.generated.js';

/** The folder with the JSON Schemas (2020-12), at the package root. */
export const SCHEMA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schemas');

import type {SchemaName} from './schema-names.generated.js';

export type {SchemaName};

/**
 * Validators are compiled from schemas/ by Ajv at build time
 * (scripts/build-validators.js), so no command pays for loading and compiling
 * Ajv when it starts.
 */
function validator(name: SchemaName): CompiledValidator {
  const v = validators[name];
  if (!v) throw new Error(`no schema named ${name}`);
  return v;
}

function pointerToPath(pointer: string): string {
  if (pointer === '') return '$';
  return `$${pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join('')}`;
}

/** The first schema violation, as "<JSON path>: <message>", or null when valid. */
export function schemaProblem(name: SchemaName, value: unknown): string | null {
  return problemOf(validator(name), value);
}

/** Run a compiled validator and describe its deepest error. */
export function problemOf(v: CompiledValidator, value: unknown): string | null {
  if (v(value)) return null;
  // The deepest error names the field at fault (anyOf branches report their own errors first).
  const e = (v.errors ?? []).reduce<NonNullable<CompiledValidator['errors']>[number] | undefined>(
    (best, x) => (!best || x.instancePath.length > best.instancePath.length ? x : best),
    undefined,
  );
  if (!e) return '$: invalid';
  let detail = e.message ?? 'invalid';
  if (e.keyword === 'additionalProperties') detail = `unexpected property "${String(e.params.additionalProperty)}"`;
  if (e.keyword === 'required') detail = `missing property "${String(e.params.missingProperty)}"`;
  if (e.keyword === 'enum') detail = `must be one of ${JSON.stringify(e.params.allowedValues)}`;
  if (e.keyword === 'const') detail = `must equal ${JSON.stringify(e.params.allowedValue)}`;
  return `${pointerToPath(e.instancePath)}: ${detail}`;
}

/** Validate or throw SCHEMA_VIOLATION naming the JSON path; the caller adds the file. */
export function assertSchema(name: SchemaName, value: unknown, what: string): void {
  const problem = schemaProblem(name, value);
  if (problem) fail('SCHEMA_VIOLATION', `${what} violates the ${name} schema at ${problem}`, {schema: name});
}
