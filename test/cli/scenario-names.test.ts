import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from '@jest/globals';
import {runCli} from '../helpers/cli.js';
import {evalArgs, fakeEnv} from '../helpers/pipeline.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

// Scenario names as the Python implementation takes them (any single path segment),
// used and hashed exactly as written; compared after NFC only to find folders nobody can tell apart.
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

function fresh() {
  const dir = tempDir('autoctx-names-');
  dirs.push(dir);
  const knowledge = path.join(dir, 'knowledge');
  const src = (name: string, files: Record<string, string>) => writeSource(path.join(dir, name), files);
  const cli = (args: string[], env?: NodeJS.ProcessEnv) =>
    runCli([...args, '--knowledge', knowledge, '--json'], env ? {env} : {});
  return {dir, knowledge, src, cli};
}
const BASE = {'playbook/playbook.md': 'Be helpful.\n', 'routing_config/roles.json': '{"model_competitor": "small"}'};

describe('scenario names beyond ASCII', () => {
  it('démo-ü works end to end: init, propose, confirm, promote, status and verify, the name hashed as written', () => {
    const {dir, knowledge, src, cli} = fresh();
    const name = 'd\u00e9mo-\u00fc'; // NFC
    const i = cli(['init', '--scenario', name, '--from', src('base', BASE)]);
    expect([i.status, i.json.scenario]).toEqual([0, name]);
    expect(fs.existsSync(path.join(knowledge, name, 'context_bundles/active.json'))).toBe(true);
    const manifest = JSON.parse(
      fs.readFileSync(path.join(knowledge, name, `context_bundles/bundles/${i.json.bundle_digest}.json`), 'utf8'),
    );
    expect(manifest.scenario).toBe(name);
    const p = cli(['propose', '--from', src('cand', {...BASE, 'playbook/playbook.md': 'Be helpful and precise.\n'})]);
    expect(p.status).toBe(0);
    expect(cli(['confirm', p.json.bundle_digest, ...evalArgs()], fakeEnv(dir)).json.status).toBe('confirmed');
    expect(cli(['promote', p.json.bundle_digest]).json.status).toBe('promoted');
    expect(cli(['status']).json.scenarios.map((s: {scenario: string}) => s.scenario)).toEqual([name]);
    expect(cli(['verify']).json).toMatchObject({status: 'ok', scenarios: [name], errors: []});
    expect(cli(['status', '--scenario', name]).status).toBe(0);
  });

  it('two folders equal after NFC are an error for verify, naming both, and every command refuses to pick one', () => {
    const {knowledge, src, cli} = fresh();
    const nfc = 'd\u00e9mo';
    const nfd = 'de\u0301mo';
    expect(cli(['init', '--scenario', nfc, '--from', src('base', BASE)]).status).toBe(0);
    // init refuses to make the twin, and writes nothing.
    const before = treeHash(knowledge);
    const twin = cli(['init', '--scenario', nfd, '--from', src('base2', BASE)]);
    expect([twin.status, twin.json.error.code]).toEqual([2, 'INVALID_NAME']);
    expect(twin.json.error.message).toContain('Unicode normalization');
    expect(treeHash(knowledge)).toBe(before);
    // A twin made by other means (a copy, another tool): verify names both; a command asked for either refuses.
    fs.cpSync(path.join(knowledge, nfc), path.join(knowledge, nfd), {recursive: true});
    const v = cli(['verify']);
    expect(v.status).toBe(8);
    expect(
      v.json.errors
        .filter((e: {code: string}) => e.code === 'SCENARIO_COLLISION')
        .map((e: {file: string}) => e.file)
        .sort(),
    ).toEqual([nfd, nfc].sort());
    expect(cli(['status', '--scenario', nfc]).json.error.code).toBe('INVALID_NAME');
    expect(
      cli(['propose', '--scenario', nfd, '--from', src('c', {...BASE, 'hints/hints.md': 'x\n'})]).json.error.code,
    ).toBe('INVALID_NAME');
  });

  it.each([
    ['a hidden name', '.demo'],
    ['a separator', 'a/b'],
    ['a backslash', 'a\\b'],
    ['NUL', 'a\u0000b'],
    ['a control character', 'a\u0007b'],
    ['a C1 control character', 'a\u0085b'],
    ['leading whitespace', ' demo'],
    ['trailing whitespace', 'demo\u3000'],
    ['"."', '.'],
    ['".."', '..'],
    ['more than 255 bytes', '\u00e9'.repeat(128)],
  ])('%s stays refused: INVALID_NAME, exit 2, nothing written', (_what, name) => {
    const {dir, src, cli} = fresh();
    const s = src('base', BASE);
    const before = treeHash(dir);
    const r = cli(['init', '--scenario', name, '--from', s]);
    expect([r.status, r.json?.error?.code]).toEqual([2, 'INVALID_NAME']);
    expect(r.json.error.message).toMatch(/^invalid scenario name /);
    expect(fs.existsSync(path.join(dir, 'knowledge'))).toBe(false);
    expect(treeHash(dir)).toBe(before);
  });
});
