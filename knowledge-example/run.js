#!/usr/bin/env node
// The quick start: builds a fresh, git-ignored knowledge tree in
// knowledge-example/knowledge from the source material beside this file and
// walks through the main commands. Safe to run again: it starts from scratch.
import {spawnSync} from 'node:child_process';
import {rmSync} from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', 'bin', 'run.js');
const knowledge = path.join(here, 'knowledge');
const src = (name) => path.relative(process.cwd(), path.join(here, 'demo', name));

function autoctx(args, {json = false, expect = [0]} = {}) {
  const shown = ['autoctx', ...args].map((a) => (/[\s"]/.test(a) ? JSON.stringify(a) : a)).join(' ');
  if (!json) console.log(`\n$ ${shown}`);
  const r = spawnSync(process.execPath, [bin, ...args, ...(json ? ['--json'] : []), '--knowledge', knowledge], {encoding: 'utf8'});
  if (!json) process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  if (!expect.includes(r.status)) {
    console.error(`unexpected exit ${r.status} from: ${shown}`);
    process.exit(1);
  }
  return json ? JSON.parse(r.stdout) : r;
}

rmSync(knowledge, {recursive: true, force: true});
console.log(`Fresh knowledge tree: ${path.relative(process.cwd(), knowledge)}`);

autoctx(['init', '--scenario', 'demo', '--from', src('baseline')]);
autoctx(['propose', '--from', src('candidate-better'), '--run-id', 'example', '--generation', '1', '--rationale', 'check the two common causes first']);
autoctx(['propose', '--from', src('candidate-worse'), '--run-id', 'example', '--generation', '2', '--rationale', 'shorter answers']);
// Proposing the same material for the same run and generation again changes nothing:
const better = autoctx(['propose', '--from', src('candidate-better'), '--run-id', 'example', '--generation', '1'], {json: true});
autoctx(['diff', better.bundle_digest.slice(0, 12), better.parent_digest.slice(0, 12)]);
autoctx(['status']);
autoctx(['verify']);
console.log('\nDone. Explore it with: npx autoctx status --knowledge knowledge-example/knowledge');
