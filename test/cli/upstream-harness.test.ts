import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from '@jest/globals';
import {parseJsonUtf8} from '../../src/canonical/index.js';
import {validateBundle} from '../../src/model/bundle/bundle.js';
import {harnessRuntimeFiles} from '../../src/model/bundle/harness-runtime.js';
import {runCli} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

// Harness validators' runtime files, as the Python implementation writes them
// (test/fixtures/upstream-harness: a tree its store wrote) and as autoctx writes them.
const FIXTURE = path.join(PROJECT_ROOT, 'test/fixtures/upstream-harness/knowledge');
const BASE = 'f0a2d42e6e1519ad7afe60887fb1dee627cc9767bf0d6a08adef214eff35ed44';
const CHILD = 'b073d32e7692ea04f9998e6d7ac02b66760b5651d7727f97aa8842c48bf9429e';
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

function copy(): string {
  const dir = tempDir('autoctx-harness-');
  dirs.push(dir);
  const k = path.join(dir, 'knowledge');
  fs.cpSync(FIXTURE, k, {recursive: true});
  return k;
}
const runtime = (k: string, digest: string) => path.join(k, 'harness/context_bundles/runtime', digest, 'harness');
const filesOf = (dir: string) =>
  Object.fromEntries(
    fs
      .readdirSync(dir)
      .sort()
      .map((n) => [n, fs.readFileSync(path.join(dir, n), 'utf8')]),
  );
const cli = (k: string, args: string[]) => runCli([...args, '--knowledge', k, '--json']);

describe('harness validators written by the Python implementation', () => {
  it('autoctx derives exactly the runtime files upstream wrote, and verify accepts the tree', () => {
    for (const digest of [BASE, CHILD]) {
      const bundle = validateBundle(
        parseJsonUtf8(fs.readFileSync(path.join(FIXTURE, `harness/context_bundles/bundles/${digest}.json`))),
      );
      const derived = Object.fromEntries(harnessRuntimeFiles(bundle).map((f) => [`${f.key}.py`, f.text]));
      expect(derived).toEqual(filesOf(runtime(FIXTURE, digest)));
    }
    const r = cli(copy(), ['verify']);
    expect([r.status, r.json.errors, r.json.warnings]).toEqual([0, [], []]);
  });

  it('autoctx writes the same bytes for the same bundle, at init and at propose', () => {
    const dir = tempDir('autoctx-harness-');
    dirs.push(dir);
    const k = path.join(dir, 'knowledge');
    const manifest = (d: string) => path.join(FIXTURE, `harness/context_bundles/bundles/${d}.json`);
    expect(cli(k, ['init', '--scenario', 'harness', '--from', manifest(BASE)]).json.bundle_digest).toBe(BASE);
    expect(cli(k, ['propose', '--from', manifest(CHILD)]).json.bundle_digest).toBe(CHILD);
    for (const digest of [BASE, CHILD]) expect(filesOf(runtime(k, digest))).toEqual(filesOf(runtime(FIXTURE, digest)));
    expect(cli(k, ['verify']).json.errors).toEqual([]);
  });

  it(
    'a missing runtime file is a warning that repair writes back; another ' +
      'text, or a .py the bundle does not name, is an error naming the file',
    () => {
      const k = copy();
      const file = path.join(runtime(k, CHILD), 'check_output.py');
      const want = fs.readFileSync(file, 'utf8');
      fs.rmSync(file);
      const missing = cli(k, ['verify']);
      expect([missing.status, missing.json.errors]).toEqual([0, []]);
      expect(missing.json.warnings).toEqual([
        expect.objectContaining({
          code: 'MISSING_RUNTIME',
          file: `harness/context_bundles/runtime/${CHILD}/harness/check_output.py`,
        }),
      ]);
      expect(cli(k, ['repair']).json.actions).toContain(
        `wrote harness/context_bundles/runtime/${CHILD}/harness/check_output.py from its manifest`,
      );
      expect(fs.readFileSync(file, 'utf8')).toBe(want);
      expect(cli(k, ['verify']).json).toMatchObject({status: 'ok', errors: [], warnings: []});

      fs.writeFileSync(file, 'def validate(output):\n    return True\n');
      fs.writeFileSync(path.join(runtime(k, BASE), 'smuggled.py'), 'import os\n');
      fs.mkdirSync(path.join(runtime(k, BASE), '__pycache__'));
      // what Python leaves when it imports: not a validator
      fs.writeFileSync(path.join(runtime(k, BASE), '__pycache__', 'flag.cpython-311.pyc'), 'bytecode');
      const edited = cli(k, ['verify']);
      expect(edited.status).toBe(8);
      expect(edited.json.errors.map((e: {code: string; file: string}) => [e.code, e.file]).sort()).toEqual([
        ['RUNTIME_MISMATCH', `harness/context_bundles/runtime/${CHILD}/harness/check_output.py`],
        ['RUNTIME_MISMATCH', `harness/context_bundles/runtime/${BASE}/harness/smuggled.py`],
      ]);
      // repair writes the validator back from the manifest; the file no bundle names is left for a person to look at.
      cli(k, ['repair']);
      expect(fs.readFileSync(file, 'utf8')).toBe(want);
      expect(cli(k, ['verify']).json.errors.map((e: {file: string}) => e.file)).toEqual([
        `harness/context_bundles/runtime/${BASE}/harness/smuggled.py`,
      ]);
    },
  );
});

describe('propose refuses what the Python implementation would not save', () => {
  it.each([
    [
      'a key that is not a Python identifier',
      {'harness_validator/check-output.py': 'x = 1\n'},
      /harness_validator key "check-output" is not a Python identifier/,
    ],
    [
      'a key beyond ASCII',
      {'harness_validator/café.py': 'x = 1\n'},
      /harness_validator key "café" is not a Python identifier/,
    ],
    [
      'JSON whose code is a number',
      {'harness_validator/count.json': '{"code": 5}'},
      /harness_validator count: its "code" must be a string/,
    ],
  ])('%s: INVALID_INPUT, exit 2, the tree unchanged', (_what, files, message) => {
    const dir = tempDir('autoctx-harness-');
    dirs.push(dir);
    const k = path.join(dir, 'knowledge');
    expect(
      cli(k, [
        'init',
        '--scenario',
        'demo',
        '--from',
        writeSource(path.join(dir, 'base'), {'playbook/playbook.md': 'Be helpful.\n'}),
      ]).status,
    ).toBe(0);
    const before = treeHash(k);
    const r = cli(k, [
      'propose',
      '--from',
      writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'Be helpful.\n', ...files}),
    ]);
    expect([r.status, r.json.error.code]).toEqual([2, 'INVALID_INPUT']);
    expect(r.json.error.message).toMatch(message);
    expect(treeHash(k)).toBe(before);
  });
});
