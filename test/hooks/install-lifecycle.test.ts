import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {applyPatch, parsePatch} from 'diff';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {runCli, runCliProcess} from '../helpers/cli.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

// hook install --project keeps Claude Code's local settings out of git; uninstall leaves nothing of autoctx's behind
// (the file it created, injection turned on); --dry-run shows the change itself, as a unified diff.
let dir: string;
let knowledge: string;
beforeAll(() => {
  dir = tempDir('autoctx-install-life-');
  knowledge = path.join(dir, 'knowledge');
  const src = writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'Check the sync icon first.\n'});
  expect(runCli(['init', '--scenario', 'demo', '--from', src, '--knowledge', knowledge]).status).toBe(0);
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

function place() {
  const root = fs.mkdtempSync(path.join(dir, 'place-'));
  const project = path.join(root, 'project');
  fs.mkdirSync(project, {recursive: true});
  const env = {HOME: path.join(root, 'home'), XDG_CONFIG_HOME: path.join(root, 'home/.config'), CODEX_HOME: ''};
  const run = (args: string[]) => runCliProcess(args, {env});
  const json = (args: string[], schema?: string) => {
    const r = run([...args, '--json']);
    expect({args, status: r.status, stderr: r.stderr}).toEqual({args, status: 0, stderr: ''});
    if (schema) expect(resultSchemaProblem(`result-${schema}`, r.json)).toBeNull();
    return r.json;
  };
  const install = (host = 'claude-code') => [
    'hook',
    'install',
    '--host',
    host,
    '--project',
    project,
    '--knowledge',
    knowledge,
    '--scenario',
    'demo',
  ];
  const uninstall = (host = 'claude-code') => ['hook', 'uninstall', '--host', host, '--project', project];
  const config = path.join(env.XDG_CONFIG_HOME, 'autoctx/config.json');
  const settings = () => JSON.parse(fs.readFileSync(config, 'utf8')).hooks.projects[project];
  return {root, project, env, run, json, install, uninstall, config, settings};
}

const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null);

describe('hook install --project for Claude Code and the project .gitignore', () => {
  it.each([
    [null, '.claude/settings.local.json\n'],
    ['node_modules/\ndist', 'node_modules/\ndist\n.claude/settings.local.json\n'],
    ['# mine\n.claude/\n', '# mine\n.claude/\n'],
    ['/.claude/settings.local.json\n', '/.claude/settings.local.json\n'],
  ])('a .gitignore of %j becomes %j, and installing again adds nothing', (before, after) => {
    const p = place();
    const ignore = path.join(p.project, '.gitignore');
    if (before !== null) fs.writeFileSync(ignore, before);
    p.json(p.install(), 'hook-install');
    expect(read(ignore)).toBe(after);
    expect(p.json(p.install(), 'hook-install')).toMatchObject({status: 'unchanged', changes: []});
    expect(read(ignore)).toBe(after);
  });

  it('Codex --project writes no .gitignore line (its hooks file is the team’s to commit or not)', () => {
    const p = place();
    p.json(p.install('codex'), 'hook-install');
    expect(fs.existsSync(path.join(p.project, '.gitignore'))).toBe(false);
  });
});

describe('hook uninstall', () => {
  it('removes the settings file install created, now empty, and turns injection off', () => {
    const p = place();
    const file = path.join(p.project, '.claude/settings.local.json');
    p.json(p.install(), 'hook-install');
    expect(fs.existsSync(file)).toBe(true);
    p.json(['hook', 'enable', '--project', p.project], 'hook-enable');
    const r = p.json(p.uninstall(), 'hook-uninstall');
    expect(r).toMatchObject({status: 'uninstalled', settings: {enabled: false}});
    expect(fs.existsSync(file)).toBe(false);
    expect(p.settings()).toEqual({knowledge, scenario: 'demo', enabled: false});
    expect(p.json(['hook', 'status', '--project', p.project], 'hook-status')).toMatchObject({
      hooks: [],
      enabled: false,
    });
  });

  it('keeps a file it created once a person added to it, and one that was there before, even empty', () => {
    const p = place();
    const file = path.join(p.project, '.claude/settings.local.json');
    p.json(p.install(), 'hook-install');
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.replace('{\n', '{\n  "model": "opus",\n'));
    p.json(p.uninstall(), 'hook-uninstall');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({model: 'opus'});

    const q = place();
    const theirs = path.join(q.project, '.claude/settings.local.json');
    fs.mkdirSync(path.dirname(theirs), {recursive: true});
    fs.writeFileSync(theirs, '{}\n');
    q.json(q.install(), 'hook-install');
    q.json(q.uninstall(), 'hook-uninstall');
    expect(read(theirs)).toBe('{}\n');
  });

  it("leaves injection on while the other host's hooks are still installed in the project", () => {
    const p = place();
    p.json(p.install(), 'hook-install');
    p.json(p.install('codex'), 'hook-install');
    p.json(['hook', 'enable', '--project', p.project], 'hook-enable');
    expect(p.json(p.uninstall(), 'hook-uninstall')).toMatchObject({settings: {enabled: true}});
    expect(p.settings().enabled).toBe(true);
    expect(p.json(p.uninstall('codex'), 'hook-uninstall')).toMatchObject({settings: {enabled: false}});
    expect(p.settings().enabled).toBe(false);
  });
});

describe('--dry-run', () => {
  it('prints the change as a unified diff, changes nothing, and the diff is exactly what the real run writes', () => {
    const p = place();
    const file = path.join(p.project, '.claude/settings.local.json');
    fs.mkdirSync(path.dirname(file), {recursive: true});
    const mine = '{\n  // mine\n  "model": "opus"\n}\n';
    fs.writeFileSync(file, mine);
    const before = treeHash(p.root);
    const human = p.run([...p.install(), '--dry-run']);
    expect([human.status, human.stderr]).toEqual([0, '']);
    expect(human.stdout).toContain(`--- ${file}\n+++ ${file}\n@@ `);
    expect(human.stdout).toContain(`--- /dev/null\n+++ ${path.join(p.project, '.gitignore')}\n`);
    expect(human.stdout).toMatch(/^\+\.claude\/settings\.local\.json$/m);
    expect(human.stdout).toMatch(/^\+ {4}"SessionStart": \[$/m);
    const dry = p.json([...p.install(), '--dry-run'], 'hook-install');
    expect(dry.status).toBe('planned');
    expect(treeHash(p.root)).toBe(before);

    p.json(p.install(), 'hook-install');
    const patches = parsePatch(dry.diff);
    expect(patches.map((x) => x.newFileName)).toEqual([file, p.config, path.join(p.project, '.gitignore')]);
    expect(applyPatch(mine, patches[0]!)).toBe(read(file));
    expect(applyPatch('', patches[1]!)).toBe(read(p.config));

    const undo = p.json([...p.uninstall(), '--dry-run'], 'hook-uninstall');
    expect(undo.status).toBe('planned');
    expect(applyPatch(read(file)!, parsePatch(undo.diff)[0]!)).toBe(mine);
    expect(p.json(p.install(), 'hook-install').diff).toBeUndefined();
  });
});
