import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';

/**
 * A document kind's schema file is the only place that names it: the SchemaName union
 * (src/store/schema-names.generated.ts) and the hook's validators (the schemas marked
 * `"x-autoctx-hook": true`) are generated from schemas/, so adding a kind edits no list.
 */
const GENERATOR = path.join(PROJECT_ROOT, 'scripts/gen-schema-names.js');
const GENERATED = path.join(PROJECT_ROOT, 'src/store/schema-names.generated.ts');
const SCHEMAS = path.join(PROJECT_ROOT, 'schemas');

function schemaFiles(): Array<{name: string; hook: boolean}> {
  return fs
    .readdirSync(SCHEMAS)
    .filter((f) => f.endsWith('.schema.json'))
    .map((f) => ({
      name: f.slice(0, -'.schema.json'.length),
      hook: JSON.parse(fs.readFileSync(path.join(SCHEMAS, f), 'utf8'))['x-autoctx-hook'] === true,
    }));
}

describe('the generated schema names', () => {
  it('are what scripts/gen-schema-names.js writes from schemas/', () => {
    const run = spawnSync(process.execPath, [GENERATOR, '--check'], {encoding: 'utf8'});
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('name every document schema, and neither common nor a --json result schema', () => {
    const named = [...fs.readFileSync(GENERATED, 'utf8').matchAll(/^ {2}\| '([^']+)'/gm)].map((m) => m[1]);
    const kinds = schemaFiles()
      .map((s) => s.name)
      .filter((n) => n !== 'common' && !n.startsWith('result-'))
      .sort();
    expect(named).toEqual(kinds);
  });

  it('are refused by --check when out of date', () => {
    const text = fs.readFileSync(GENERATED, 'utf8');
    try {
      fs.writeFileSync(GENERATED, text.replace(/^ {2}\| 'work-unit'/m, "  | 'work-units'"));
      const run = spawnSync(process.execPath, [GENERATOR, '--check'], {encoding: 'utf8'});
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('schema-names.generated.ts is out of date');
    } finally {
      fs.writeFileSync(GENERATED, text);
    }
  });

  it('give the hook exactly the validators of the schemas marked for it', async () => {
    const hook = await import(pathToFileURL(path.join(PROJECT_ROOT, 'dist/store/validators.hook.generated.js')).href);
    const marked = schemaFiles()
      .filter((s) => s.hook)
      .map((s) => s.name)
      .sort();
    expect(Object.keys(hook.default).sort()).toEqual(marked);
    expect(marked).toContain('active');
    expect(marked).not.toContain('evaluator-plan');
  });
});
