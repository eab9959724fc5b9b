#!/usr/bin/env node
// autoctx entry point. NO_COLOR is honoured here because chalk 5 ignores it.
if (process.env.NO_COLOR) process.env.FORCE_COLOR = '0';
// The entry points of @oclif/core that a run needs, not its index (which loads help, ux and more up front).
const [{execute}, {settings}] = await Promise.all([import('@oclif/core/execute'), import('@oclif/core/settings')]);
// Always run the compiled commands in dist/, whatever NODE_ENV says.
settings.enableAutoTranspile = false;
await execute({dir: import.meta.url});
