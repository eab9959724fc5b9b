import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {importsOf, sources} from '../helpers/imports.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

/**
 * The layer rules of ARCHITECTURE §2, as this project refines them
 * (docs/architecture.md): imports go one way only, from a higher layer to a
 * lower one. Layers of the same rank never import each other.
 */
const RANK: Record<string, number> = {
  errors: 0,
  canonical: 1,
  stats: 1,
  model: 2,
  store: 3,
  evaluator: 3,
  core: 4,
  cli: 5,
  hooks: 5,
  public: 5,
  index: 6,
  commands: 6,
};

/** Packages a layer may import, beyond node's own modules that are not file-system access. */
const UI = ['@oclif/core', 'chalk', 'ink', 'react'];
const FILESYSTEM = ['node:fs', 'node:fs/promises', 'fs', 'fs/promises', 'write-file-atomic'];

const SRC = path.join(PROJECT_ROOT, 'src');

function layerOf(file: string): string {
  const rel = path.relative(SRC, file);
  return rel.split(path.sep)[0]!.replace(/\.(ts|js)$/, '');
}

interface Violation {
  file: string;
  imports: string;
  why: string;
}

/** What breaks the layer rules in the given files (path and text). */
function violations(files: Array<{file: string; text: string}>): Violation[] {
  const out: Violation[] = [];
  for (const {file, text} of files) {
    const from = layerOf(file);
    const rank = RANK[from];
    const rel = path.relative(PROJECT_ROOT, file);
    if (rank === undefined) {
      out.push({file: rel, imports: '', why: `src/${from} is not a layer of the design`});
      continue;
    }
    for (const spec of importsOf(text)) {
      if (spec.startsWith('.')) {
        const target = path.resolve(path.dirname(file), spec);
        const to = layerOf(target);
        if (to === from) continue;
        const toRank = RANK[to];
        if (toRank === undefined || toRank >= rank)
          out.push({
            file: rel,
            imports: spec,
            why: `${from} (rank ${rank}) may not import ${to} (rank ${toRank ?? '?'})`,
          });
        if ((from === 'hooks' || from === 'public') && (to === 'cli' || to === 'commands'))
          out.push({file: rel, imports: spec, why: `${from} never imports the CLI`});
        continue;
      }
      const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
      if (UI.includes(pkg) && from !== 'cli' && from !== 'commands')
        out.push({file: rel, imports: spec, why: `only cli and commands use ${pkg}`});
      if (FILESYSTEM.includes(spec) && from !== 'store')
        out.push({file: rel, imports: spec, why: 'the store does every file-system access'});
    }
  }
  return out;
}

describe('the import boundary (ARCHITECTURE §2)', () => {
  const files = sources(SRC);

  it('src holds only the layers of the design, and the hook entry point has its place', () => {
    const tops = new Set(files.map(layerOf));
    for (const top of tops) expect([top, RANK[top] !== undefined]).toEqual([top, true]);
    expect(RANK.hooks).toBeLessThan(RANK.cli! + 1);
    expect(files.length).toBeGreaterThan(100);
  });

  it.each([
    ['the fast path of the delivery commands', 'cli/fast-path.ts', false],
    ['the hook entry point', 'hooks/main.ts', true],
  ])('%s (src/%s) loads neither oclif nor any other UI package, however deep', (_name, entry, noCli) => {
    const seen = new Set<string>();
    const ui: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      // A generated module (the validators) has only its declarations in src: its code is the built one.
      const code = fs.existsSync(file)
        ? file
        : path.join(PROJECT_ROOT, 'dist', path.relative(SRC, file).replace(/\.ts$/, '.js'));
      for (const spec of importsOf(fs.readFileSync(code, 'utf8'))) {
        if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts'));
        else if (UI.includes(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!))
          ui.push(`${path.relative(PROJECT_ROOT, file)} imports ${spec}`);
      }
    };
    visit(path.join(SRC, entry));
    expect(seen.size).toBeGreaterThan(20);
    expect(ui).toEqual([]);
    // The hook never imports the CLI, however deep.
    if (noCli)
      expect(
        [...seen].map((f) => path.relative(SRC, f)).filter((f) => f.startsWith('cli/') || f.startsWith('commands/')),
      ).toEqual([]);
  });

  it('no file imports against the layer rules', () => {
    expect(violations(files.map((file) => ({file, text: fs.readFileSync(file, 'utf8')})))).toEqual([]);
  });

  it('nothing but oclif commands lives in src/commands, and commands write no files', () => {
    for (const file of files.filter((f) => layerOf(f) === 'commands')) {
      const text = fs.readFileSync(file, 'utf8');
      expect([path.relative(SRC, file), /export default class \w+ extends \w+Command\b/.test(text)]).toEqual([
        path.relative(SRC, file),
        true,
      ]);
      expect([path.relative(SRC, file), /writeFileSync|createWriteStream|appendFileSync/.test(text)]).toEqual([
        path.relative(SRC, file),
        false,
      ]);
    }
  });

  it('the check itself catches each kind of violation', () => {
    const probe = (layer: string, text: string) => ({file: path.join(SRC, layer, 'probe.ts'), text});
    const cases = [
      probe('core', "import {AutoctxCommand} from '../cli/base-command.js';"),
      probe('store', "import {prepareRun} from '../core/run/prepare.js';"),
      probe('model', "import {readFixtures} from '../store/inputs.js';"),
      probe('hooks', "import {Flags} from '@oclif/core';"),
      probe('hooks', "export {toAutoctxError} from '../cli/base-command.js';"),
      probe('core', "import fs from 'node:fs';"),
      probe('stats', "const m = await import('../model/bundle.js');"),
      probe('canonical', "import {x} from '../stats/rng.js';"),
    ];
    const found = violations(cases);
    expect(
      cases.map((c) => found.some((v) => v.file === path.relative(PROJECT_ROOT, c.file) && c.text.includes(v.imports))),
    ).toEqual(cases.map(() => true));
    expect(
      violations([
        probe('core', "import {fail} from '../errors.js';\nimport {readFixtures} from '../store/index.js';"),
      ]),
    ).toEqual([]);
  });
});
