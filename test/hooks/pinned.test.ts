import {createHash} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {runHook} from '../../src/hooks/run.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, writeSource} from '../helpers/tree.js';
import {hookCase} from '../helpers/hook-case.js';

/**
 * A session pinned to one bundle (AUTOCTX_HOOK_BUNDLE, what the agent evaluator sets for each arm): both hooks render
 * from exactly that bundle, a candidate never confirmed included, and write nothing in the tree.
 */
const FIXTURES = path.join(PROJECT_ROOT, 'test/fixtures/hosts');
const ACTIVE_PLAYBOOK = 'Check the sync icon first.\n';
const CANDIDATE_PLAYBOOK = 'Check the sync icon, then the quota page.\n';
let dir: string;
let template: string;
let active: string;
let candidate: string;

function must(knowledge: string, args: string[]) {
  const r = runCli([...args, '--knowledge', knowledge, '--json']);
  if (r.status !== 0) throw new Error(`${args.join(' ')} → ${r.status}: ${r.stdout}${r.stderr}`);
  return r.json;
}

beforeAll(() => {
  dir = tempDir('autoctx-hook-pinned-');
  template = path.join(dir, 'template');
  const rest = {
    'tool_guidance/search.md': 'Search the help centre before answering.\n',
    'hints/quota.md': 'The quota page lists what each account may store.\n',
  };
  must(template, [
    'init',
    '--scenario',
    'demo',
    '--from',
    writeSource(path.join(dir, 'base'), {'playbook/playbook.md': ACTIVE_PLAYBOOK, ...rest}),
  ]);
  candidate = must(template, [
    'propose',
    '--from',
    writeSource(path.join(dir, 'cand'), {'playbook/playbook.md': CANDIDATE_PLAYBOOK, ...rest}),
  ]).bundle_digest as string;
  active = JSON.parse(fs.readFileSync(path.join(template, 'demo/context_bundles/active.json'), 'utf8'))
    .bundle_digest as string;
  for (const b of [active, candidate])
    must(template, [
      'tag',
      'add',
      must(template, ['bundle', 'show', b]).manifest.components.find((c: {kind: string}) => c.kind === 'playbook')
        .digest,
    ]);
}, 120_000);

/** A hash of every file under the tree: what a pinned session must leave as it found it. */
function treeHash(root: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, {withFileTypes: true}).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      h.update(`${path.relative(root, p)}\n`);
      if (e.isDirectory()) walk(p);
      else h.update(fs.readFileSync(p));
    }
  };
  walk(root);
  return h.digest('hex');
}

async function hook(
  host: string,
  event: 'session-start' | 'user-prompt-submit',
  s: ReturnType<typeof hookCase>,
  fields: Record<string, unknown>,
  pin: string,
): Promise<{context: string | null; outcome: string}> {
  const shape = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${host}.${event}.json`), 'utf8'));
  let out = '';
  const result = await runHook([event, '--host', host], {
    stdin: JSON.stringify({...shape, cwd: s.project, ...fields}),
    env: {...s.env, AUTOCTX_HOOK_BUNDLE: pin},
    write: (line) => {
      out += line;
    },
  });
  if (out === '') return {context: null, outcome: result.outcome};
  expect(out.endsWith('\n') && out.split('\n').length === 2).toBe(true);
  return {context: JSON.parse(out).hookSpecificOutput.additionalContext as string, outcome: result.outcome};
}

describe.each(['claude-code', 'codex'])('%s: a session pinned to one bundle', (host) => {
  it(
    "gets that bundle's package, a candidate's as well as the " + "active one's, and the tree is left as it was",
    async () => {
      const s = hookCase(dir, template);
      const before = treeHash(s.knowledge);
      const pinned = await hook(host, 'session-start', s, {session_id: 's1', source: 'startup'}, candidate);
      expect(pinned.outcome).toBe('injected');
      expect(pinned.context).toContain(CANDIDATE_PLAYBOOK.trim());
      expect(pinned.context).not.toContain(ACTIVE_PLAYBOOK.trim());
      expect(pinned.context).toContain('AUTOCTX_HISTORY_BEGIN_V1');
      const other = await hook(host, 'session-start', s, {session_id: 's2', source: 'startup'}, active);
      expect(other.context).toContain(ACTIVE_PLAYBOOK.trim());
      expect(other.context).not.toContain(CANDIDATE_PLAYBOOK.trim());
      // The same package as bootstrap render of that bundle would give a session it served.
      expect(treeHash(s.knowledge)).toBe(before);
    },
  );

  it('recalls from the pinned bundle on the first prompt, leaving out what the session start delivered', async () => {
    const s = hookCase(dir, template);
    const before = treeHash(s.knowledge);
    const r = await hook(host, 'user-prompt-submit', s, {session_id: 's1', prompt: 'quota page sync icon'}, candidate);
    expect(r.outcome).toBe('recalled');
    expect(r.context).toContain('The quota page lists');
    // The playbook was delivered whole at session start: not recalled again.
    expect(r.context).not.toContain(CANDIDATE_PLAYBOOK.trim());
    expect(r.context).not.toContain(ACTIVE_PLAYBOOK.trim());
    expect(treeHash(s.knowledge)).toBe(before);
  });

  it('delivers nothing for a digest the tree does not hold, or a value that is not a digest', async () => {
    const s = hookCase(dir, template);
    const missing = await hook(host, 'session-start', s, {session_id: 's1', source: 'startup'}, 'a'.repeat(64));
    expect(missing).toEqual({context: null, outcome: 'failed'});
    const bad = await hook(host, 'session-start', s, {session_id: 's1', source: 'startup'}, 'latest');
    expect(bad).toEqual({context: null, outcome: 'invalid_pin'});
  });
});
