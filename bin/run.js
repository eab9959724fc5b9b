#!/usr/bin/env node
// autoctx entry point. NO_COLOR is honoured here because chalk 5 ignores it.
if (process.env.NO_COLOR) process.env.FORCE_COLOR = '0';
const load = (file) =>
  import(new URL(`../dist/bundle/${file}`, import.meta.url).href).catch((error) => {
    // A checkout that was never built: one line, not a stack (exit 9: the installation, not the input).
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(`dist/bundle/${file}`)) throw error;
    process.stderr.write(
      `error NOT_BUILT: autoctx is not built here (dist/bundle/${file} is missing); run npm run build\n`,
    );
    process.exit(9);
  });
const args = process.argv.slice(2);
// The delivery commands with --json (bootstrap prepare|claim|render, recall) run without oclif when the whole
// command line is one the fast path understands (src/cli/fast-path.ts); anything else goes to oclif.
// So does the agent evaluator (evaluator agent), which autoctx may start once per arm.
const fastPath = process.env.AUTOCTX_FAST_PATH !== '0';
const fast =
  (args[0] === 'bootstrap' || args[0] === 'recall') && args.includes('--json') && fastPath
    ? await (await load('fast.js')).runFastPath(args)
    : args[0] === 'evaluator' && args[1] === 'agent' && fastPath
      ? await (await load('fast.js')).runAgentFastPath(args)
      : null;
if (fast !== null) process.exitCode = fast;
else {
  // The whole CLI, with the parts of @oclif/core it uses, is one bundled file (scripts/bundle.js).
  const {execute, settings} = await load('cli.js');
  // Always run the compiled commands in dist/, whatever NODE_ENV says.
  settings.enableAutoTranspile = false;
  // -h is --help, where it cannot be the value of a flag before it (autoctx has no -h flag of its own).
  const end = args.indexOf('--');
  for (let i = 0; i < (end === -1 ? args.length : end); i++) {
    if (
      args[i] === '-h' &&
      !(i > 0 && /^-{1,2}[^-=][^=]*$/.test(args[i - 1]) && !/^--(json|quiet|rebind|help)$/.test(args[i - 1]))
    )
      args[i] = '--help';
  }
  await execute({dir: import.meta.url, args});
}
