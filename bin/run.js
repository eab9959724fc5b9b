#!/usr/bin/env node
// autoctx entry point. NO_COLOR is honoured here because chalk 5 ignores it.
if (process.env.NO_COLOR) process.env.FORCE_COLOR = '0';
// The entry points of @oclif/core that a run needs, not its index (which loads help, ux and more up front).
const {execute, settings} = await import('../dist/bundle/cli.js');
// Always run the compiled commands in dist/, whatever NODE_ENV says.
settings.enableAutoTranspile = false;
// -h is --help, where it cannot be the value of a flag before it (autoctx has no -h flag of its own).
const args = process.argv.slice(2);
const end = args.indexOf('--');
for (let i = 0; i < (end === -1 ? args.length : end); i++) {
  if (args[i] === '-h' && !(i > 0 && /^-{1,2}[^-=][^=]*$/.test(args[i - 1]) && !/^--(json|quiet|rebind|help)$/.test(args[i - 1]))) args[i] = '--help';
}
await execute({dir: import.meta.url, args});
