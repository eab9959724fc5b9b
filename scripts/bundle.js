// Bundles the compiled CLI (dist/) and the parts of @oclif/core it uses into
// dist/bundle/cli.js, so that a command starts by reading one file instead of
// some 250 modules. The verify worker is bundled beside it under the same name
// it has in dist/core, so `new URL('./verify-worker.js', import.meta.url)`
// finds it in either layout. ink and react stay outside: only the live view
// imports them, and lazily. Run by `npm run build`, after tsc.
import {readdirSync, statSync, writeFileSync} from 'node:fs';
import path from 'node:path';
import {build} from 'esbuild';

const root = process.cwd();
const commandsDir = path.join(root, 'dist/commands');

/** Every compiled command file, keyed by its oclif id (`bundle/show.js` is `bundle:show`). */
function commandFiles(dir, prefix = []) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) return commandFiles(file, [...prefix, name]);
      return name.endsWith('.js') ? [{id: [...prefix, name.slice(0, -3)].join(':'), file}] : [];
    });
}

const commands = commandFiles(commandsDir);
const entry = [
  ...commands.map((c, i) => `import C${i} from ${JSON.stringify(c.file)};`),
  `export const COMMANDS = {${commands.map((c, i) => `${JSON.stringify(c.id)}: C${i}`).join(', ')}};`,
  `export {default as HELP} from ${JSON.stringify(path.join(root, 'dist/cli/help.js'))};`,
  `export {default as COMMAND_NOT_FOUND} from ` +
    `${JSON.stringify(path.join(root, 'dist/cli/oclif-hooks/command-not-found.js'))};`,
  `export {default as PRERUN} from ${JSON.stringify(path.join(root, 'dist/cli/oclif-hooks/prerun.js'))};`,
  `export {execute} from '@oclif/core/execute';`,
  `export {run} from '@oclif/core/run';`,
  `export {settings} from '@oclif/core/settings';`,
].join('\n');

const shared = {
  metafile: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.17',
  outdir: path.join(root, 'dist/bundle'),
  external: ['ink', 'react', 'react/*', '@oclif/plugin-autocomplete', 'typescript', 'ts-node'],
  // CommonJS dependencies (oclif's own, write-file-atomic) call require() and
  // read __filename; give the ESM bundle both.
  banner: {
    js: [
      "import {createRequire as __autoctxRequire} from 'node:module';",
      "import {fileURLToPath as __autoctxPath} from 'node:url';",
      "import {dirname as __autoctxDirname} from 'node:path';",
      'const require = __autoctxRequire(import.meta.url);',
      'const __filename = __autoctxPath(import.meta.url);',
      'const __dirname = __autoctxDirname(__filename);',
    ].join(' '),
  },
  // The live view stays a module of its own in dist/cli: bundled, its static
  // imports of ink and react would be hoisted to the top of the bundle.
  plugins: [
    {
      name: 'live-view-outside',
      setup(b) {
        b.onResolve({filter: /[/\\]live-view\.js$/}, () => ({path: '../cli/live-view.js', external: true}));
      },
    },
  ],
  // jsonc-parser's "main" is a UMD file that requires its parts at run time; its ES build bundles.
  alias: {'jsonc-parser': path.join(root, 'node_modules/jsonc-parser/lib/esm/main.js')},
  legalComments: 'none',
  logLevel: 'warning',
};
const r = await build({
  ...shared,
  stdin: {contents: entry, resolveDir: root, sourcefile: 'cli-entry.js', loader: 'js'},
  entryNames: 'cli',
  outdir: undefined,
  outfile: path.join(root, 'dist/bundle/cli.js'),
});
await build({...shared, entryPoints: {'verify-worker': path.join(root, 'dist/core/bundle/verify-worker.js')}});
// The delivery commands' fast path (bootstrap prepare|claim|render and recall with --json): no oclif in it.
const fast = await build({...shared, entryPoints: {fast: path.join(root, 'dist/cli/fast-path.js')}});
const oclifInFast = Object.keys(fast.metafile.inputs).filter((f) => f.includes('@oclif'));
if (oclifInFast.length > 0) throw new Error(`dist/bundle/fast.js must not hold oclif: ${oclifInFast.join(', ')}`);
// The agent-host hook entry point (bin/autoctx-hook.js): no oclif, no CLI.
// It takes the validators of the documents it reads only (scripts/build-validators.js, HOOK_SCHEMAS).
const hookValidators = {
  name: 'hook-validators',
  setup(b) {
    b.onResolve({filter: /[/\\]validators\.generated\.js$/}, (args) => ({
      path: path.join(path.dirname(path.resolve(args.resolveDir, args.path)), 'validators.hook.generated.js'),
    }));
  },
};
const hook = await build({
  ...shared,
  plugins: [...shared.plugins, hookValidators],
  entryPoints: {hook: path.join(root, 'dist/hooks/main.js')},
});
const cliInHook = Object.keys(hook.metafile.inputs).filter(
  (f) => f.includes('@oclif') || /dist[/\\](cli|commands)[/\\]/.test(f),
);
if (cliInHook.length > 0)
  throw new Error(`dist/bundle/hook.js must not hold oclif or the CLI: ${cliInHook.join(', ')}`);
if (process.env.BUNDLE_META) writeFileSync('/tmp/meta.json', JSON.stringify(r.metafile));
writeFileSync(path.join(root, 'dist/bundle/package.json'), '{"type": "module"}\n');
console.log(`dist/bundle/cli.js: ${commands.length} commands`);
