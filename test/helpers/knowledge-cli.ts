import fs from 'node:fs';
import path from 'node:path';
import {runCli} from './cli.js';
import {tempDir} from './tree.js';

/** The CLI against one knowledge tree, in JSON. */
export function cliIn(knowledge: string, args: string[], env?: NodeJS.ProcessEnv) {
  return runCli([...args, '--knowledge', knowledge, '--json'], {env});
}

/** The same, required to end with `exit` (0 by default): its JSON answer. */
export function mustIn(knowledge: string, args: string[], exit = 0, env?: NodeJS.ProcessEnv) {
  const r = cliIn(knowledge, args, env);
  if (r.status !== exit) throw new Error(`${args.join(' ')} → ${r.status}: ${r.stdout}${r.stderr}`);
  return r.json;
}

/** A copy of a knowledge tree in a fresh folder (`prefix` and `label` name it, for a reader of a failure). */
export function copyTree(from: string, prefix: string, label: string): string {
  const dir = path.join(tempDir(`${prefix}-${label}-`), 'knowledge');
  fs.cpSync(from, dir, {recursive: true});
  return dir;
}
