#!/usr/bin/env node
// The agent-host hook entry point: `autoctx-hook session-start|user-prompt-submit --host claude-code|codex`.
// It never loads oclif, prints at most one line on stdout and always exits 0 (src/hooks/main.ts).
// biome-ignore lint/plugin: the hook's outermost boundary: the agent host never fails; stderr says what happened
try {
  const {main} = await import(new URL('../dist/bundle/hook.js', import.meta.url).href);
  await main(process.argv.slice(2));
} catch (error) {
  // Not built, or broken beyond the hook's own handling: nothing on stdout, one line on stderr, exit 0.
  const outcome = error?.code === 'ERR_MODULE_NOT_FOUND' ? 'not_built' : 'internal';
  process.stderr.write(`${JSON.stringify({component: 'autoctx.hook', outcome})}\n`);
  process.exitCode = 0;
}
