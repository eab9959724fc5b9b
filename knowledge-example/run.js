#!/usr/bin/env node
// The quick start: builds a fresh, git-ignored knowledge tree in
// knowledge-example/knowledge from the source material beside this file and
// runs the whole pipeline: init → propose → confirm → release (shadow, canary, ACTIVE = promote) for the better
// candidate, the worse one rejected, then status, log, replay, verify and a
// rollback; then the bootstrap package: two tags, a handoff, render and
// recall. Safe to run again: it starts from scratch.
import {spawnSync} from 'node:child_process';
import {rmSync} from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', 'bin', 'run.js');
const knowledge = path.join(here, 'knowledge');
const rel = (...p) => path.relative(process.cwd(), path.join(here, ...p));
const evaluate = ['--evaluator', `node ${rel('evaluator.js')}`, '--evaluator-mode', 'persistent', '--fixtures', rel('demo', 'fixtures.jsonl'), '--quiet'];

// Each command is shown as it can be copied and run from the project folder, --knowledge included.
const quote = (a) => (/^[\w./:=@%+,-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
function autoctx(args, {json = false, expect = [0]} = {}) {
  const shown = ['npx', 'autoctx', ...args, '--knowledge', path.relative(process.cwd(), knowledge)].map(quote).join(' ');
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

const started = Date.now();
rmSync(knowledge, {recursive: true, force: true});
console.log(`Fresh knowledge tree: ${path.relative(process.cwd(), knowledge)}`);

autoctx(['init', '--scenario', 'demo', '--from', rel('demo', 'baseline')]);
autoctx(['propose', '--from', rel('demo', 'candidate-better'), '--run-id', 'example', '--generation', '1', '--rationale', 'check the two common causes first']);
autoctx(['propose', '--from', rel('demo', 'candidate-worse'), '--run-id', 'example', '--generation', '2', '--rationale', 'shorter answers']);
const better = autoctx(['propose', '--from', rel('demo', 'candidate-better'), '--run-id', 'example', '--generation', '1'], {json: true});
const worse = autoctx(['propose', '--from', rel('demo', 'candidate-worse'), '--run-id', 'example', '--generation', '2'], {json: true});
const b = better.bundle_digest.slice(0, 12);
const w = worse.bundle_digest.slice(0, 12);
autoctx(['diff', b, better.parent_digest.slice(0, 12)]);
autoctx(['confirm', b, ...evaluate]);
// Releases: name the baseline and the candidate, then shadow, canary and ACTIVE through the gate (ACTIVE is the promotion).
autoctx(['release', 'name', 'v1', better.parent_digest.slice(0, 12)]);
autoctx(['release', 'name', 'v2', b, '--parent-version', 'v1', '--rollback-target', 'v1', '--golden-inputs', rel('demo', 'fixtures.jsonl')]);
autoctx(['release', 'transition', 'v2', '--to', 'SHADOW', '--shadow-percent', '5', '--rationale', 'try it beside the baseline']);
autoctx(['release', 'transition', 'v2', '--to', 'CANARY', '--canary-percent', '10', '--rationale', 'ten percent of users']);
const registry = autoctx(['release', 'list'], {json: true}).scopes[0].registry_digest;
autoctx(['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'the canary held', '--expect-registry', registry]);
autoctx(['release', 'list']);
autoctx(['release', 'history']);
autoctx(['confirm', w, ...evaluate], {expect: [3]});
autoctx(['status']);
autoctx(['log']);
autoctx(['replay', b]);
autoctx(['verify']);
autoctx(['rollback', '--rationale', 'show that a rollback is one command', '--expect-active', b]);
autoctx(['rollback', '--rationale', 'and that it can be undone']);

// Bootstrap context: tag two components of the serving bundle, write a handoff, render the package, recall.
const serving = autoctx(['bundle', 'show', b], {json: true}).manifest.components;
for (const kind of ['playbook', 'hints']) autoctx(['tag', 'add', serving.find((c) => c.kind === kind).digest]);
autoctx(['handoff', 'write', '--id', 'release-notes', '--from', rel('demo', 'handoff.json')]);
autoctx(['bootstrap', 'render', '--handoff', 'release-notes@1']);
autoctx(['recall', '--query', 'old settings path']);
console.log(`\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s. Explore it with: npx autoctx status --knowledge ${path.relative(process.cwd(), knowledge)}`);
