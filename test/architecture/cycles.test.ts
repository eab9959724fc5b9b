import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {importsOf, resolveImport, sources} from '../helpers/imports.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

/**
 * No import cycles in src, type imports included (docs/architecture.md): a
 * module can be read, tested and moved knowing only what it imports. Every
 * relative import counts, static or dynamic, `import type` and re-exports
 * alike, since a type that goes round a cycle ties its modules as tightly as
 * a value does.
 */
const SRC = path.join(PROJECT_ROOT, 'src');

/**
 * Each import cycle among the given files, as one loop of files (relative to the project), the first in sorted order
 * first.
 */
function importCycles(files: ReadonlyArray<{file: string; text: string}>): string[][] {
  const known = new Set(files.map((f) => f.file));
  const edges = new Map(
    files.map(({file, text}) => [
      file,
      [
        ...new Set(
          importsOf(text)
            .filter((s) => s.startsWith('.'))
            .map((s) => resolveImport(file, s, known)),
        ),
      ].filter((t): t is string => t !== null),
    ]),
  );
  // Tarjan's strongly connected components: every component of more than one file (or a file importing itself) holds a
  // cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || edges.get(v)!.includes(v)) components.push(component);
  };
  for (const {file} of files) if (!index.has(file)) visit(file);
  // One loop through each component, from its first file, to name the cycle in the failure.
  return components.map((component) => {
    const inside = new Set(component);
    const start = [...component].sort()[0]!;
    const loop = [start];
    const seen = new Set([start]);
    const walk = (v: string): boolean => {
      for (const w of edges.get(v)!.filter((x) => inside.has(x))) {
        if (w === start) return true;
        if (seen.has(w)) continue;
        seen.add(w);
        loop.push(w);
        if (walk(w)) return true;
        loop.pop();
      }
      return false;
    };
    walk(start);
    return [...loop, start].map((f) => path.relative(PROJECT_ROOT, f));
  });
}

describe('the import graph', () => {
  it('has no cycle, type imports included', () => {
    const files = sources(SRC).map((file) => ({file, text: fs.readFileSync(file, 'utf8')}));
    expect(files.length).toBeGreaterThan(100);
    expect(importCycles(files)).toEqual([]);
  });

  it('the check itself finds a cycle of type imports, of re-exports, of dynamic imports, and a long one', () => {
    const at = (rel: string, text: string) => ({file: path.join(SRC, rel), text});
    const name = (rel: string) => path.join('src', rel);
    // Two modules that know each other only through types.
    expect(
      importCycles([
        at('store/a.ts', "import type {B} from './b.js';\nexport interface A {b: B}"),
        at('store/b.ts', "import type {A} from './a.js';\nexport interface B {a: A}"),
      ]),
    ).toEqual([[name('store/a.ts'), name('store/b.ts'), name('store/a.ts')]]);
    // A re-export and a dynamic import close a loop too, across folders.
    expect(
      importCycles([
        at('core/x/a.ts', "export {b} from '../y/b.js';"),
        at('core/y/b.ts', "export const b = () => import('../x/a.js');"),
      ]),
    ).toHaveLength(1);
    // Four files in a ring (named from the first in sorted order), with one file outside it that imports into the ring.
    const ring = [
      at('m/one.ts', "import {two} from './two.js';"),
      at('m/two.ts', "import type {Three} from './three.js';"),
      at('m/three.ts', "import {four} from './four.js';"),
      at('m/four.ts', "import {one} from './one.js';"),
      at('m/out.ts', "import {one} from './one.js';"),
    ];
    expect(importCycles(ring)).toEqual([['four', 'one', 'two', 'three', 'four'].map((n) => name(`m/${n}.ts`))]);
    // A file that imports itself.
    expect(importCycles([at('m/self.ts', "import type {Self} from './self.js';")])).toEqual([
      [name('m/self.ts'), name('m/self.ts')],
    ]);
    // No loop, no finding: a chain, and a diamond.
    expect(
      importCycles([
        at('m/a.ts', "import {b} from './b.js';\nimport {c} from './c.js';"),
        at('m/b.ts', "import {d} from './d.js';"),
        at('m/c.ts', "import {d} from './d.js';"),
        at('m/d.ts', "import {fail} from '../errors.js';"),
      ]),
    ).toEqual([]);
  });
});
