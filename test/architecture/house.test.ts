import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';

/**
 * The house rules of the source tree (docs/architecture.md): small folders,
 * the same system folders in each layer, small files.
 */
const SRC = path.join(PROJECT_ROOT, 'src');
const MAX_FILES_PER_FOLDER = 15;
const MAX_LINES = 400;
/** The layers that are cut into systems: each has exactly the same system folders. */
const SYSTEM_LAYERS = ['core', 'model', 'store/kinds'];

/**
 * Numeric kernels that may exceed the line limit, each with its reason. A
 * kernel is listed only when cutting it would cut one algorithm in two.
 */
const NUMERIC_KERNELS: Record<string, string> = {
  // WebAssembly text: wabt assembles one .wat file into one module, and the whole
  // file is one SIMD scan (JSON key order, sixteen bytes at a time); a second file
  // would need a linker step the build does not have.
  'canonical/key-order.wat': 'one SIMD module, assembled from one file',
  // The same for the manifest literal scan.
  'canonical/literal-scan.wat': 'one SIMD module, assembled from one file',
};

/**
 * Files over the limit that another change is shrinking, each with that change.
 * An entry must go as soon as its file is within the limit (the test says so).
 */
const SHRINKING: Record<string, string> = {};

interface SourceFile {
  /** The path relative to src, with "/" separators. */
  rel: string;
  lines: number;
}

function listing(dir: string): SourceFile[] {
  return fs.readdirSync(dir, {withFileTypes: true}).flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) return listing(file);
    const text = fs.readFileSync(file, 'utf8');
    return [
      {
        rel: path.relative(SRC, file).split(path.sep).join('/'),
        lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0),
      },
    ];
  });
}

const folderOf = (rel: string) => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '.');

/** The direct sub-folders of a folder of src that hold any file. */
function subfolders(files: readonly SourceFile[], folder: string): string[] {
  const prefix = `${folder}/`;
  return [
    ...new Set(
      files
        .filter((f) => f.rel.startsWith(prefix) && f.rel.slice(prefix.length).includes('/'))
        .map((f) => f.rel.slice(prefix.length).split('/')[0]!),
    ),
  ].sort();
}

/** What breaks the house rules in a listing of src. */
function houseViolations(files: readonly SourceFile[], kernels = NUMERIC_KERNELS, shrinking = SHRINKING): string[] {
  const out: string[] = [];
  const perFolder = new Map<string, number>();
  for (const f of files) perFolder.set(folderOf(f.rel), (perFolder.get(folderOf(f.rel)) ?? 0) + 1);
  for (const [folder, n] of perFolder) {
    // oclif maps the file names in src/commands to the commands people type: never renamed to meet a count.
    if (folder === 'commands' || folder.startsWith('commands/')) continue;
    if (n > MAX_FILES_PER_FOLDER) out.push(`src/${folder} holds ${n} files (at most ${MAX_FILES_PER_FOLDER})`);
  }
  const [first, ...others] = SYSTEM_LAYERS.map((layer) => ({layer, systems: subfolders(files, layer)}));
  for (const o of others)
    if (o.systems.join() !== first!.systems.join())
      out.push(
        `src/${o.layer} has the system folders ${o.systems.join(', ')}, ` +
          `src/${first!.layer} has ${first!.systems.join(', ')}`,
      );
  for (const f of files) {
    const over = f.lines > MAX_LINES;
    if (over && !/\.generated\./.test(f.rel) && kernels[f.rel] === undefined && shrinking[f.rel] === undefined)
      out.push(`src/${f.rel} has ${f.lines} lines (at most ${MAX_LINES})`);
    if (!over && shrinking[f.rel] !== undefined)
      out.push(`src/${f.rel} is within ${MAX_LINES} lines now: take it off SHRINKING`);
  }
  const present = new Set(files.map((f) => f.rel));
  for (const rel of [...Object.keys(kernels), ...Object.keys(shrinking)])
    if (!present.has(rel)) out.push(`src/${rel} is listed but does not exist`);
  return out;
}

/** The widest a line of code may be, in characters (biome.json's lineWidth). */
const MAX_COLUMNS = 120;
/** The folders whose code lines are checked (under the project root), and what is left out of them. */
const WIDTH_ROOTS = ['src', 'scripts', 'bench', 'bin', 'knowledge-example', 'test'];
const WIDTH_SKIPPED =
  /(^|\/)node_modules(\/|$)|^test\/fixtures\/|^hosts-e2e\/|^knowledge-example\/(agent\/out|knowledge)\/|\.generated\./;
const CODE = /\.(ts|tsx|js|mjs|cjs)$/;
/**
 * Files that may hold a line over the width, each with why it cannot be cut. None today: a long string or
 * template literal is cut into a `+` chain (scripts/split-long-lines.js), a long regular expression is built
 * from pieces with `new RegExp`, a comment is rewrapped (scripts/rewrap-comments.mjs).
 */
const WIDE_FILES: Record<string, string> = {};

interface CodeFile {
  /** The path relative to the project root, with "/" separators. */
  rel: string;
  text: string;
}

function codeFiles(rel: string): CodeFile[] {
  if (WIDTH_SKIPPED.test(rel)) return [];
  const file = path.join(PROJECT_ROOT, rel);
  if (fs.statSync(file).isDirectory())
    return fs
      .readdirSync(file)
      .sort()
      .flatMap((e) => codeFiles(`${rel}/${e}`));
  return CODE.test(rel) ? [{rel, text: fs.readFileSync(file, 'utf8')}] : [];
}

/** The lines wider than the width, as "path:line: n columns", and listed files with no such line. */
function wideLines(files: readonly CodeFile[], listed = WIDE_FILES): string[] {
  const out: string[] = [];
  const wide = new Set<string>();
  for (const f of files)
    f.text.split('\n').forEach((line, i) => {
      const columns = [...line].length;
      if (columns <= MAX_COLUMNS) return;
      wide.add(f.rel);
      if (listed[f.rel] === undefined) out.push(`${f.rel}:${i + 1}: ${columns} columns (at most ${MAX_COLUMNS})`);
    });
  for (const rel of Object.keys(listed))
    if (!wide.has(rel)) out.push(`${rel} is listed in WIDE_FILES but has no wide line`);
  return out;
}

describe('the house rules', () => {
  const files = listing(SRC);

  it(
    'hold in src: folders of at most 15 files, the same systems ' +
      'in core, model and store/kinds, files of at most 400 lines',
    () => {
      expect(files.length).toBeGreaterThan(100);
      expect(subfolders(files, 'core').length).toBeGreaterThan(5);
      expect(houseViolations(files)).toEqual([]);
    },
  );

  it(`hold in ${WIDTH_ROOTS.join(', ')}: lines of at most ${MAX_COLUMNS} columns`, () => {
    const code = WIDTH_ROOTS.flatMap(codeFiles);
    expect(code.length).toBeGreaterThan(300);
    expect(wideLines(code)).toEqual([]);
  });

  it('the width check counts characters, skips what it must, and lists only files that need it', () => {
    const line = (n: number, c = 'x') => c.repeat(n);
    expect(wideLines([{rel: 'src/a.ts', text: `${line(120)}\n${line(40)}\n`}], {})).toEqual([]);
    expect(wideLines([{rel: 'src/a.ts', text: `ok\n  ${line(119)}\n`}], {})).toEqual([
      'src/a.ts:2: 121 columns (at most 120)',
    ]);
    // A character outside the basic plane is one column, not two UTF-16 units nor four bytes.
    expect(wideLines([{rel: 'src/a.ts', text: line(120, '\u{1F600}')}], {})).toEqual([]);
    expect(wideLines([{rel: 'src/a.ts', text: line(121, 'é')}], {'src/a.ts': 'a table'})).toEqual([]);
    expect(wideLines([{rel: 'src/a.ts', text: 'short'}], {'src/a.ts': 'a table'})).toEqual([
      'src/a.ts is listed in WIDE_FILES but has no wide line',
    ]);
    for (const rel of [
      'test/fixtures/x.ts',
      'hosts-e2e/x.js',
      'knowledge-example/knowledge/x.js',
      'knowledge-example/agent/out/codex/knowledge/.state/agent/prepared/x/src/a.js',
      'src/x.generated.ts',
      'bench/node_modules/y.js',
    ])
      expect(WIDTH_SKIPPED.test(rel)).toBe(true);
    for (const rel of ['test/cli/x.test.ts', 'src/a.ts', 'scripts/b.mjs']) expect(WIDTH_SKIPPED.test(rel)).toBe(false);
  });

  it('the check itself catches each kind of violation', () => {
    const base: SourceFile[] = SYSTEM_LAYERS.flatMap((layer) =>
      ['release', 'common'].map((system) => ({rel: `${layer}/${system}/a.ts`, lines: 10})),
    );
    expect(houseViolations(base, {}, {})).toEqual([]);
    const many = (folder: string, n: number) =>
      Array.from({length: n}, (_, i) => ({rel: `${folder}/f${i}.ts`, lines: 1}));
    // Sixteen files in one folder; sixteen in a command topic are fine.
    expect(houseViolations([...base, ...many('core/release', 15)], {}, {})).toEqual([
      'src/core/release holds 16 files (at most 15)',
    ]);
    expect(houseViolations([...base, ...many('commands/release', 16), ...many('commands', 16)], {}, {})).toEqual([]);
    // A system folder missing from one layer, or one too many.
    expect(
      houseViolations(
        base.filter((f) => f.rel !== 'model/release/a.ts'),
        {},
        {},
      ),
    ).toEqual(['src/model has the system folders common, src/core has common, release']);
    expect(houseViolations([...base, {rel: 'store/kinds/verify/a.ts', lines: 1}], {}, {})).toHaveLength(1);
    // A file of 401 lines; a generated one and a listed kernel may be longer.
    expect(houseViolations([...base, {rel: 'core/release/long.ts', lines: 401}], {}, {})).toEqual([
      'src/core/release/long.ts has 401 lines (at most 400)',
    ]);
    expect(
      houseViolations(
        [
          ...base,
          {rel: 'core/release/ok.ts', lines: 400},
          {rel: 'model/x.generated.ts', lines: 9000},
          {rel: 'stats/k.ts', lines: 900},
        ],
        {'stats/k.ts': 'a kernel'},
        {},
      ),
    ).toEqual([]);
    // A shrinking file that shrank, and a listed file that is gone.
    expect(houseViolations([...base, {rel: 'store/s.ts', lines: 300}], {}, {'store/s.ts': 'being cut'})).toEqual([
      'src/store/s.ts is within 400 lines now: take it off SHRINKING',
    ]);
    expect(houseViolations(base, {'stats/gone.ts': 'a kernel'}, {})).toEqual([
      'src/stats/gone.ts is listed but does not exist',
    ]);
  });
});
