import {readFileSync, readdirSync} from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {Ajv2020, type ValidateFunction} from 'ajv/dist/2020.js';
import {fail} from '../errors.js';

/** The folder with the JSON Schemas, at the package root (same depth from src/ and dist/). */
export const SCHEMA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schemas');
const BASE = 'https://autoctx.dev/schemas/';

export type SchemaName =
  | 'active'
  | 'manifest'
  | 'record-v1'
  | 'record-v2'
  | 'manifest-diff'
  | 'matched-trials'
  | 'matched-trials-legacy'
  | 'promotion'
  | 'rollback'
  | 'negative-result'
  | 'evaluator-plan'
  | 'false-promotion'
  | 'reservation-artifact'
  | 'stale-terminalization'
  | 'causal-attribution'
  | `result-${string}`;

let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

function instance(): Ajv2020 {
  if (!ajv) {
    ajv = new Ajv2020({strict: true, allErrors: false, validateFormats: false});
    for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.schema.json')).sort()) {
      ajv.addSchema(JSON.parse(readFileSync(path.join(SCHEMA_DIR, file), 'utf8')));
    }
  }
  return ajv;
}

function validator(name: SchemaName): ValidateFunction {
  let v = compiled.get(name);
  if (!v) {
    v = instance().getSchema(`${BASE}${name}.schema.json`);
    if (!v) throw new Error(`no schema named ${name}`);
    compiled.set(name, v);
  }
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
  const v = validator(name);
  if (v(value)) return null;
  const e = v.errors?.[0];
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
