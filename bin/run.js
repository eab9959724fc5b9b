#!/usr/bin/env node
// autoctx entry point. NO_COLOR is honoured here because chalk 5 ignores it.
if (process.env.NO_COLOR) process.env.FORCE_COLOR = '0';
const {execute, settings} = await import('@oclif/core');
// Always run the compiled commands in dist/, whatever NODE_ENV says.
settings.enableAutoTranspile = false;
await execute({dir: import.meta.url});
