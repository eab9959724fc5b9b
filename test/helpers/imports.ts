import fs from 'node:fs';
import path from 'node:path';

/** Every .ts file under dir (the generated declarations included), depth first. */
export function sources(dir: string): string[] {
  return fs
    .readdirSync(dir, {withFileTypes: true})
    .flatMap((e) =>
      e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
}

/** Every module a file imports (static and dynamic imports, type imports, re-exports), as written. */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s*(['"])([^'"]+)\1/g)) out.push(m[2]!);
  for (const m of text.matchAll(/\bimport\(\s*(['"])([^'"]+)\1\s*\)/g)) out.push(m[2]!);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*(['"])([^'"]+)\1/g)) out.push(m[2]!);
  return out;
}

/**
 * The file a relative import names among `known`: x.js is x.ts, or x.d.ts for
 * a generated module (its code is built), or x/index.ts. Null when none is.
 */
export function resolveImport(from: string, spec: string, known: ReadonlySet<string>): string | null {
  const base = path.resolve(path.dirname(from), spec).replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}.d.ts`, path.join(base, 'index.ts')])
    if (known.has(candidate)) return candidate;
  return null;
}
