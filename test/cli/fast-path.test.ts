import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it, jest} from '@jest/globals';
import {parseFastPath, runFastPath} from '../../src/cli/fast-path.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli} from '../helpers/cli.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

let dir: string;
let template: string;
let digest: string;
beforeAll(() => {
  dir = tempDir('autoctx-fast-');
  template = path.join(dir, 'template');
  const src = writeSource(path.join(dir, 'src'), {
    'playbook/playbook.md': 'Check the sync icon first.\n',
    'hints/hints.md': 'Quota warnings come from the account page.\n',
    'tool_guidance/search.md': 'Search the help centre.\n',
  });
  expect(runCli(['init', '--scenario', 'demo', '--from', src, '--knowledge', template]).status).toBe(0);
  const active = JSON.parse(
    fs.readFileSync(path.join(template, 'demo/context_bundles/active.json'), 'utf8'),
  ).bundle_digest;
  digest = runCli(['bundle', 'show', active, '--knowledge', template, '--json']).json.manifest.components[0].digest;
  expect(runCli(['tag', 'add', digest, '--knowledge', template]).status).toBe(0);
  fs.writeFileSync(path.join(dir, 'h.json'), '{"summary": "first"}');
  expect(
    runCli(['handoff', 'write', '--id', 'notes', '--from', path.join(dir, 'h.json'), '--knowledge', template]).status,
  ).toBe(0);
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

/**
 * One command line with the fast path on or off: through bin/run.js as a process (`ownProcess`), or here, the fast
 * path's runFastPath (bin/run.js hands a line it declines to oclif) against the built CLI's oclif in this test process.
 */
async function run(knowledge: string, args: string[], fast: boolean, ownProcess: boolean) {
  const argv = args.map((a) => a.replace('{k}', knowledge));
  const anon = (r: {status: number | null; stdout: string; stderr: string}) => ({
    status: r.status,
    stdout: r.stdout.replaceAll(knowledge, '{k}'),
    stderr: r.stderr,
  });
  if (ownProcess) {
    const r = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'bin/run.js'), ...argv], {
      encoding: 'utf8',
      env: {...process.env, AUTOCTX_FAST_PATH: fast ? '1' : '0', NO_COLOR: '1'},
    });
    return anon(r);
  }
  if (!fast) return anon(runCli(argv));
  let stdout = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  let status: number | null;
  try {
    status = await runFastPath(argv);
  } finally {
    write.mockRestore();
  }
  return status === null ? anon(runCli(argv)) : anon({status, stdout, stderr: ''});
}

const PREPARE = [
  'bootstrap',
  'prepare',
  '--integration',
  'codex',
  '--lifecycle',
  'startup',
  '--knowledge',
  '{k}',
  '--json',
];
const sequences: Array<[string, string[][]]> = [
  [
    'prepare, retry, claim twice, prepare again',
    [
      [...PREPARE, '--enabled', '--event-id', 'e1'],
      [...PREPARE, '--enabled', '--event-id', 'e1'],
      ['bootstrap', 'claim', 'RECEIPT', '--outcome', 'injected', '--knowledge', '{k}', '--json'],
      ['bootstrap', 'claim', 'RECEIPT', '--outcome', 'injected', '-k', '{k}', '--json'],
      [...PREPARE, '--enabled', '--event-id', 'e1'],
    ],
  ],
  [
    'disabled, a handoff, a byte limit, a mismatch',
    [
      [...PREPARE, '--event-id', 'e2'],
      [...PREPARE, '--enabled', '--event-id=e3', '--handoff', 'notes@1', '--max-bytes', '1024'],
      [...PREPARE, '--enabled', '--event-id', 'e3', '--handoff', 'notes@1'],
    ],
  ],
  [
    'render and recall',
    [
      ['bootstrap', 'render', '--handoff', 'notes@1', '--knowledge', '{k}', '--json'],
      ['bootstrap', 'render', '--handoff', 'notes@7', '--knowledge', '{k}', '--json'],
      ['recall', '-q', 'quota account', '--knowledge', '{k}', '--json'],
      ['recall', '--query', 'quota', '--receipt', 'bcr_zz', '--knowledge', '{k}', '--json'],
    ],
  ],
  [
    'unknown scenario and knowledge',
    [
      [...PREPARE, '--scenario', 'nope', '--enabled'],
      ['bootstrap', 'render', '--knowledge', '/nonexistent/k', '--json'],
    ],
  ],
];

describe('the fast path of the delivery commands', () => {
  // Every sequence here in this process; the first through bin/run.js too, as processes.
  const cases = [...sequences.map(([name, steps]) => [name, steps, false] as const), [...sequences[0]!, true] as const];
  it.each(cases)(
    'answers as oclif does, byte for byte, and leaves the same tree: %s (own processes: %s)',
    async (_name, steps, ownProcess) => {
      const trees: Array<{k: string; out: Array<{status: number | null; stdout: string; stderr: string}>}> = [];
      for (const fast of [true, false]) {
        const k = path.join(dir, `k-${fast}-${Math.random().toString(16).slice(2)}`);
        fs.cpSync(template, k, {recursive: true});
        let receipt = '';
        const out = [];
        for (const args of steps) {
          const r = await run(
            k,
            args.map((a) => (a === 'RECEIPT' ? receipt : a)),
            fast,
            ownProcess,
          );
          const id = /"receipt_id":"(bcr_[0-9a-f]{32})"/.exec(r.stdout)?.[1];
          if (id && !receipt) receipt = id;
          out.push(r);
        }
        trees.push({k, out});
      }
      expect(trees[0]!.out).toEqual(trees[1]!.out);
      expect(trees[0]!.out.every((r) => r.stderr === '' && r.stdout.trim().split('\n').length === 1)).toBe(true);
      // Receipts hold their times: the trees agree on everything else.
      const strip = (k: string) => {
        const folder = path.join(k, '.state/bootstrap/receipts');
        if (!fs.existsSync(folder)) return [];
        return fs
          .readdirSync(folder)
          .sort()
          .map((f) => {
            const {created_at: _c, updated_at: _u, ...rest} = JSON.parse(fs.readFileSync(path.join(folder, f), 'utf8'));
            return [f, rest];
          });
      };
      expect(strip(trees[0]!.k)).toEqual(strip(trees[1]!.k));
      fs.rmSync(path.join(trees[0]!.k, '.state'), {recursive: true, force: true});
      fs.rmSync(path.join(trees[1]!.k, '.state'), {recursive: true, force: true});
      expect(treeHash(trees[0]!.k)).toBe(treeHash(trees[1]!.k));
    },
  );

  it('takes only command lines it understands whole, with --json; the rest go to oclif', () => {
    const ok = (argv: string[]) => parseFastPath(argv) !== null;
    expect(ok(['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'startup', '--json'])).toBe(true);
    expect(ok(['bootstrap', 'claim', 'bcr_x', '--outcome', 'failed', '--json'])).toBe(true);
    expect(ok(['recall', '-q', 'x', '-s', 'demo', '--json'])).toBe(true);
    for (const argv of [
      // no --json: the human answer is oclif's
      ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'startup'],
      // a value oclif refuses: its message
      ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'boot', '--json'],
      ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'startup', '--max-bytes', '100', '--json'],
      ['bootstrap', 'prepare', '--integration', 'codex', '--json'], // a required flag missing
      ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'startup', '--json', '--help'],
      ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'startup', '--json', '-h'],
      ['bootstrap', 'prepare', '--integration', 'codex', '--integration', 'x', '--lifecycle', 'startup', '--json'],
      ['bootstrap', 'prepare', '--integration', 'codex', '--lifecycle', 'startup', '--enabled=yes', '--json'],
      ['bootstrap', 'claim', '--outcome', 'failed', '--json'],
      ['bootstrap', 'claim', 'a', 'b', '--outcome', 'failed', '--json'],
      ['bootstrap', 'frobnicate', '--json'],
      ['status', '--json'],
    ])
      expect([argv.join(' '), ok(argv)]).toEqual([argv.join(' '), false]);
  });

  it('its bundle holds no oclif, and runs from any working folder', () => {
    const bundle = fs.readFileSync(path.join(PROJECT_ROOT, 'dist/bundle/fast.js'), 'utf8');
    expect(bundle).not.toMatch(/@oclif\/core/);
    const k = path.join(dir, 'k-trace');
    fs.cpSync(template, k, {recursive: true});
    const before = treeHash(template);
    const r = spawnSync(
      process.execPath,
      [
        '--trace-event-categories',
        'node.fs.sync',
        path.join(PROJECT_ROOT, 'bin/run.js'),
        ...PREPARE.map((a) => a.replace('{k}', k)),
        '--enabled',
      ],
      {encoding: 'utf8', cwd: dir},
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).status).toBe('ready');
    expect(treeHash(template)).toBe(before);
  });
});
