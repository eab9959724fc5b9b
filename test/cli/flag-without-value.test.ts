import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it, jest} from '@jest/globals';
import {runFastPath} from '../../src/cli/fast-path.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

// Every value-taking flag of every command, as the build's manifest lists them (aliases and single-letter
// forms included), given with no value: last on the line, or followed by another flag. Each is the user's
// mistake: exit 2, one line, USAGE, naming the flag, and the knowledge tree untouched. The delivery commands
// with --json may run without oclif (bin/run.js's fast path): both paths answer the same (checked here for every
// flag, and through bin/run.js as a process for a sample).

interface ManifestFlag {
  name: string;
  type: 'option' | 'boolean';
  char?: string;
  aliases?: string[];
}
const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, {flags: Record<string, ManifestFlag>}>;
};

/** [command id, flag name, the token that names it]: one per spelling of every value flag. */
const cases: Array<[string, string, string]> = [];
/** The commands with a --json flag (the hook commands have none: there --json is an unknown word). */
const withJson = new Set<string>();
for (const [id, command] of Object.entries(manifest.commands)) {
  if (command.flags.json) withJson.add(id);
  for (const flag of Object.values(command.flags)) {
    if (flag.type !== 'option') continue;
    for (const token of [
      `--${flag.name}`,
      ...(flag.aliases ?? []).map((a) => `--${a}`),
      ...(flag.char ? [`-${flag.char}`] : []),
    ])
      cases.push([id, flag.name, token]);
  }
}

let dir: string;
let knowledge: string;
let before: string;
beforeAll(() => {
  dir = tempDir('autoctx-flag-value-');
  knowledge = path.join(dir, 'k');
  const src = writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'Be helpful.\n'});
  expect(runCli(['init', '--scenario', 'demo', '--from', src, '--knowledge', knowledge]).status).toBe(0);
  before = treeHash(knowledge);
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

/** The command's words, the knowledge root (unless the flag under test is --knowledge itself), then `rest`. */
function line(id: string, flag: string, rest: string[]): string[] {
  return [...id.split(':'), ...(flag === 'knowledge' ? [] : ['--knowledge', knowledge]), ...rest];
}

function expectUsage(r: {status: number | null; stdout: string; stderr: string}, flag: string, json: boolean): void {
  if (json) {
    expect(r.stderr).toBe('');
    expect(r.stdout.endsWith('\n') && r.stdout.trim().split('\n').length === 1).toBe(true);
    const e = JSON.parse(r.stdout).error;
    expect([e.code, e.exit_code]).toEqual(['USAGE', 2]);
    expect(e.message).toContain(`--${flag}`);
  } else {
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error USAGE: [^\n]+\n$/);
    expect(r.stderr).toContain(`--${flag}`);
  }
  expect(r.status).toBe(2);
}

describe('a value flag given without its value', () => {
  it('the manifest lists the flags under test', () => {
    expect(cases.length).toBeGreaterThan(250);
    expect(cases).toEqual(
      expect.arrayContaining([
        ['rollback', 'rationale', '--rationale'],
        ['reject', 'rationale', '--rationale'],
        ['handoff:write', 'from', '--from'],
        ['release:transition', 'rationale', '--rationale'],
      ]),
    );
  });

  it.each(cases)('%s %s (%s): given last, is a one-line usage error', (id, flag, token) => {
    expectUsage(runCli(line(id, flag, [token])), flag, false);
    if (withJson.has(id)) expectUsage(runCli(line(id, flag, ['--json', token])), flag, true);
    expect(treeHash(knowledge)).toBe(before);
  });

  it.each(cases)('%s %s (%s): followed by another flag, is a one-line usage error', (id, flag, token) => {
    expectUsage(runCli(line(id, flag, [token, '--json'])), flag, withJson.has(id));
    expect(treeHash(knowledge)).toBe(before);
  });

  // The delivery commands' fast path (src/cli/fast-path.ts) for every value flag, run here: it either declines the
  // line (bin/run.js then hands it to oclif, whose answer is the one above) or answers exactly as oclif does.
  const delivery = cases.filter(([id]) => id.startsWith('bootstrap:') || id === 'recall');
  it.each(delivery)('%s %s (%s): the fast path answers as oclif does', async (id, flag, token) => {
    for (const args of [line(id, flag, ['--json', token]), line(id, flag, [token, '--json'])]) {
      const oclif = runCli(args);
      expectUsage(oclif, flag, true);
      expect(await fastPathAnswer(args, oclif)).toEqual(oclif);
    }
    expect(treeHash(knowledge)).toBe(before);
  });

  // bin/run.js itself, as a process, with and without its fast path: one value flag of each delivery command (a
  // single-letter spelling among them), in both places on the line.
  const spawned = [...new Set(delivery.map(([id]) => id))].map(
    (id) => delivery.find(([i, , token]) => i === id && token !== '--knowledge' && token !== '-k')!,
  );
  spawned.push(delivery.find(([, , token]) => token === '-q')!);
  it.each(spawned)('%s %s (%s): bin/run.js answers the same with and without its fast path', (id, flag, token) => {
    for (const args of [line(id, flag, ['--json', token]), line(id, flag, [token, '--json'])]) {
      const [fast, oclif] = ['1', '0'].map((on) => {
        const r = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'bin/run.js'), ...args], {
          encoding: 'utf8',
          env: {...process.env, AUTOCTX_FAST_PATH: on, NO_COLOR: '1'},
        });
        return {status: r.status, stdout: r.stdout, stderr: r.stderr};
      });
      expect(fast).toEqual(oclif);
      expectUsage(fast!, flag, true);
    }
    expect(treeHash(knowledge)).toBe(before);
  });
});

/**
 * What bin/run.js answers with its fast path on: the fast path's own answer, or `oclif`'s when it declines the line.
 */
async function fastPathAnswer(args: string[], oclif: {status: number | null; stdout: string; stderr: string}) {
  let stdout = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  try {
    const status = await runFastPath(args);
    return status === null ? {...oclif} : {status, stdout, stderr: ''};
  } finally {
    write.mockRestore();
  }
}
