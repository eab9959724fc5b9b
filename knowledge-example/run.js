#!/usr/bin/env node
// The quick start: builds a fresh, git-ignored knowledge tree in
// knowledge-example/knowledge from the source material beside this file and
// runs the whole pipeline: init → propose → confirm → release (shadow, canary, ACTIVE = promote) for the better
// candidate, the worse one rejected, then status, log, replay, verify and a
// rollback; then the bootstrap package: two tags, a handoff, render and
// recall; a canary delivery through the hook, sealed and inspected, an edited copy that fails
// inspection, signing keys and an emergency rollback approved by a second signer. Safe to run
// again: it starts from scratch.
import {spawnSync} from 'node:child_process';
import {mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', 'bin', 'run.js');
const knowledge = path.join(here, 'knowledge');
const rel = (...p) => path.relative(process.cwd(), path.join(here, ...p));
const evaluate = [
  '--evaluator',
  `node ${rel('evaluator.js')}`,
  '--evaluator-mode',
  'persistent',
  '--fixtures',
  rel('demo', 'fixtures.jsonl'),
  '--quiet',
];

// Each command is shown as it can be copied and run from the project folder, --knowledge included.
const quote = (a) => (/^[\w./:=@%+,-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
function autoctx(args, {json = false, expect = [0]} = {}) {
  const shown = ['npx', 'autoctx', ...args, '--knowledge', path.relative(process.cwd(), knowledge)]
    .map(quote)
    .join(' ');
  if (!json) console.log(`\n$ ${shown}`);
  const r = spawnSync(process.execPath, [bin, ...args, ...(json ? ['--json'] : []), '--knowledge', knowledge], {
    encoding: 'utf8',
  });
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
autoctx([
  'propose',
  '--from',
  rel('demo', 'candidate-better'),
  '--run-id',
  'example',
  '--generation',
  '1',
  '--rationale',
  'check the two common causes first',
]);
autoctx([
  'propose',
  '--from',
  rel('demo', 'candidate-worse'),
  '--run-id',
  'example',
  '--generation',
  '2',
  '--rationale',
  'shorter answers',
]);
const better = autoctx(
  ['propose', '--from', rel('demo', 'candidate-better'), '--run-id', 'example', '--generation', '1'],
  {json: true},
);
const worse = autoctx(
  ['propose', '--from', rel('demo', 'candidate-worse'), '--run-id', 'example', '--generation', '2'],
  {json: true},
);
const b = better.bundle_digest.slice(0, 12);
const w = worse.bundle_digest.slice(0, 12);
autoctx(['diff', b, better.parent_digest.slice(0, 12)]);
autoctx(['confirm', b, ...evaluate]);
// Releases: name the baseline and the candidate, then shadow, canary and ACTIVE through the gate (ACTIVE is the
// promotion).
autoctx(['release', 'name', 'v1', better.parent_digest.slice(0, 12)]);
autoctx([
  'release',
  'name',
  'v2',
  b,
  '--parent-version',
  'v1',
  '--rollback-target',
  'v1',
  '--golden-inputs',
  rel('demo', 'fixtures.jsonl'),
]);
autoctx([
  'release',
  'transition',
  'v2',
  '--to',
  'SHADOW',
  '--shadow-percent',
  '5',
  '--rationale',
  'try it beside the baseline',
]);
autoctx([
  'release',
  'transition',
  'v2',
  '--to',
  'CANARY',
  '--canary-percent',
  '10',
  '--rationale',
  'ten percent of users',
]);
// The canary reaches an agent: tag the candidate's texts, then a Claude Code session in the canary's share starts
// through autoctx's hook (enabled for this folder in a throwaway user config), which delivers v2's package and seals
// it.
const candidate = autoctx(['bundle', 'show', b], {json: true}).manifest.components;
for (const kind of ['playbook', 'hints']) autoctx(['tag', 'add', candidate.find((c) => c.kind === kind).digest]);
let session = '';
for (let i = 0; session === ''; i++)
  if (autoctx(['route', '--session', `example-${i}`], {json: true}).state === 'CANARY') session = `example-${i}`;
const userConfig = mkdtempSync(path.join(os.tmpdir(), 'autoctx-example-'));
mkdirSync(path.join(userConfig, 'autoctx'));
writeFileSync(
  path.join(userConfig, 'autoctx/config.json'),
  JSON.stringify({schema_version: 1, hooks: {projects: {[here]: {knowledge, scenario: 'demo', enabled: true}}}}),
);
console.log(
  `\n# what Claude Code runs at session start: echo ` +
    `'{"hook_event_name":"SessionStart","session_id":"${session}","source":"startup",…}' | node ` +
    `bin/autoctx-hook.js session-start --host claude-code`,
);
const delivered = spawnSync(
  process.execPath,
  [path.join(here, '..', 'bin', 'autoctx-hook.js'), 'session-start', '--host', 'claude-code'],
  {
    input: JSON.stringify({
      hook_event_name: 'SessionStart',
      session_id: session,
      cwd: here,
      source: 'startup',
      transcript_path: '/dev/null',
    }),
    encoding: 'utf8',
    env: {...process.env, XDG_CONFIG_HOME: userConfig},
  },
);
const context = JSON.parse(delivered.stdout).hookSpecificOutput.additionalContext;
console.log(`(${Buffer.byteLength(context)} bytes of v2's context delivered to ${session}, and sealed)`);
autoctx(['inspect', 'run']);
const registry = autoctx(['release', 'list'], {json: true}).scopes[0].registry_digest;
autoctx([
  'release',
  'transition',
  'v2',
  '--to',
  'ACTIVE',
  '--rationale',
  'the canary held',
  '--expect-registry',
  registry,
]);
autoctx(['release', 'list']);
autoctx(['release', 'history']);
autoctx(['confirm', w, ...evaluate], {expect: [3]});
autoctx(['status']);
autoctx(['log']);
autoctx(['replay', b]);
autoctx(['verify']);
autoctx(['rollback', '--rationale', 'show that a rollback is one command', '--expect-active', b]);
autoctx(['rollback', '--rationale', 'and that it can be undone']);

// Bootstrap context (the serving bundle's playbook and hints are tagged above): write a handoff, render the package,
// recall.
autoctx(['handoff', 'write', '--id', 'release-notes', '--from', rel('demo', 'handoff.json')]);
autoctx(['bootstrap', 'render', '--handoff', 'release-notes@1']);
autoctx(['recall', '--query', 'old settings path']);

// Delivery evidence: the canary's delivery, edited after the fact and sealed as another host would, fails inspection.
const sealed = readdirSync(path.join(knowledge, '.state/evidence'), {recursive: true}).find(
  (f) => f.includes('packages/') && f.endsWith('.json'),
);
const original = JSON.parse(readFileSync(path.join(knowledge, '.state/evidence', sealed), 'utf8')).package;
const editedFile = path.join(userConfig, 'edited-delivery.json');
writeFileSync(
  editedFile,
  JSON.stringify({
    ...original,
    correlation_id: 'edited-copy',
    user_prompt: original.user_prompt.replace('tray icon', 'menu bar'),
  }),
);
autoctx(['evidence', 'seal', '--from', path.relative(process.cwd(), editedFile)]);
autoctx(['inspect', 'run']);

// Signing keys make approvals real: two keys made here (a team keeps them in CI secrets), the anchor kept outside the
// tree.
const key = (name) => {
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path.join(userConfig, name)]);
  return readFileSync(path.join(userConfig, `${name}.pub`), 'utf8')
    .trim()
    .split(' ')
    .slice(0, 2)
    .join(' ');
};
const anchor = path.join(userConfig, 'allowed_signers');
writeFileSync(
  anchor,
  `alice@example.com namespaces="autoctx" ${key('alice')}\nbob@example.com ` +
    `namespaces="autoctx,autoctx-approver" ${key('bob')}\n`,
);
const signer = (name) => path.relative(process.cwd(), path.join(userConfig, name));
autoctx([
  'signing',
  'start',
  '--from',
  path.relative(process.cwd(), anchor),
  '--signing-key',
  signer('alice'),
  '--actor',
  'alice@example.com',
]);
// An emergency rollback executes at once, signed by alice; bob, the second signer with the approver role, approves it.
const emergency = autoctx(
  [
    'rollback',
    '--emergency',
    '--rationale',
    'the canary playbook sends users to the wrong menu',
    '--actor',
    'alice@example.com',
    '--signing-key',
    signer('alice'),
  ],
  {json: true},
);
console.log(`\n(emergency rollback ${emergency.execution_key}: ${emergency.execution_status})`);
autoctx([
  'rollback',
  'approve',
  emergency.execution_key,
  '--actor',
  'bob@example.com',
  '--signing-key',
  signer('bob'),
  '--allowed-signers',
  path.relative(process.cwd(), anchor),
]);
// The fix is in: roll forward again (an ordinary rollback undoes the emergency one), signed as well.
autoctx([
  'rollback',
  '--rationale',
  'the menu is fixed in the canary playbook',
  '--actor',
  'alice@example.com',
  '--signing-key',
  signer('alice'),
]);
autoctx(['rollback', 'list']);
autoctx(['verify', '--allowed-signers', path.relative(process.cwd(), anchor)]);
rmSync(userConfig, {recursive: true, force: true});
console.log(
  `\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s. Explore it with: npx autoctx status ` +
    `--knowledge ${path.relative(process.cwd(), knowledge)}`,
);
