#!/usr/bin/env node
// autoctx entry point. NO_COLOR is honoured here because chalk 5 ignores it.
if (process.env.NO_COLOR && process.env.NO_COLOR !== '') process.env.FORCE_COLOR = '0';
const {execute} = await import('@oclif/core');
await execute({dir: import.meta.url});
