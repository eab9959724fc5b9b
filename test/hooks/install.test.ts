import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {runCli, runCliProcess} from '../helpers/cli.js';
import {tempDir, writeSource} from '../helpers/tree.js';

let dir: string;
let knowledge: string;
beforeAll(() => {
  dir = tempDir('autoctx-install-');
  knowledge = path.join(dir, 'knowledge');
  expect(runCli(['init', '--scenario', 'demo', '--from', writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'Check the sync icon first.\n'}), '--knowledge', knowledge]).status).toBe(0);
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

function place() {
  const root = fs.mkdtempSync(path.join(dir, 'place-'));
  const project = path.join(root, 'project');
  fs.mkdirSync(project, {recursive: true});
  const env = {HOME: path.join(root, 'home'), XDG_CONFIG_HOME: path.join(root, 'home/.config'), CODEX_HOME: ''};
  const cli = (args: string[], schema?: string, exit = 0) => {
    const r = runCliProcess([...args, '--json'], {env});
    expect({args, status: r.status, stderr: r.stderr}).toEqual({args, status: exit, stderr: ''});
    if (schema) expect(resultSchemaProblem(`result-${schema}`, r.json)).toBeNull();
    return r.json;
  };
  return {root, project, env, cli};
}

const HAND_WRITTEN = '{\n    "permissions": {"allow": ["Bash(ls)"]},\n    // a comment the person wrote\n    "hooks": {\n        "Stop": [ {"hooks": [{"type": "command", "command": "echo bye"}]} ]\n    }\n}\n';

describe('hook install, uninstall, enable, disable, status', () => {
  it('Claude Code --project: merges into .claude/settings.local.json, every other byte kept; twice changes nothing; uninstall gives the bytes back', () => {
    const p = place();
    const file = path.join(p.project, '.claude/settings.local.json');
    fs.mkdirSync(path.dirname(file), {recursive: true});
    fs.writeFileSync(file, HAND_WRITTEN);
    const args = ['hook', 'install', '--host', 'claude-code', '--project', p.project, '--knowledge', knowledge, '--scenario', 'demo'];
    const first = p.cli(args, 'hook-install');
    expect(first).toMatchObject({status: 'installed', file, settings: {enabled: false}});
    const text = fs.readFileSync(file, 'utf8');
    expect(text.startsWith('{\n    "permissions": {"allow": ["Bash(ls)"]},\n    // a comment the person wrote\n    "hooks": {\n        "Stop": [ {"hooks": [{"type": "command", "command": "echo bye"}]} ],\n')).toBe(true);
    const settings = JSON.parse(text.replace('// a comment the person wrote\n', ''));
    const start = settings.hooks.SessionStart[0];
    expect(start.matcher).toBe('startup|resume|clear|compact|fork');
    expect(start.hooks).toEqual([{type: 'command', command: `'${process.execPath}' '${path.join(PROJECT_ROOT, 'bin/autoctx-hook.js')}' session-start --host claude-code`, timeout: 5}]);
    expect(settings.hooks.UserPromptSubmit[0].hooks[0].command).toMatch(/autoctx-hook\.js' user-prompt-submit --host claude-code$/);
    // The command holds no setting and never npx.
    expect(text).not.toMatch(/npx|--knowledge|demo/);
    const config = path.join(p.env.XDG_CONFIG_HOME, 'autoctx/config.json');
    expect(JSON.parse(fs.readFileSync(config, 'utf8')).hooks.projects[p.project]).toEqual({knowledge, scenario: 'demo', enabled: false});
    expect(fs.statSync(config).mode & 0o777).toBe(0o600);
    const before = [fs.readFileSync(file, 'utf8'), fs.readFileSync(config, 'utf8')];
    expect(p.cli(args, 'hook-install')).toMatchObject({status: 'unchanged', changes: []});
    expect([fs.readFileSync(file, 'utf8'), fs.readFileSync(config, 'utf8')]).toEqual(before);
    // The opt-in is the user's: enable, then install again keeps it.
    expect(p.cli(['hook', 'enable', '--project', p.project], 'hook-enable')).toMatchObject({status: 'updated', enabled: true});
    expect(p.cli(args, 'hook-install')).toMatchObject({status: 'unchanged', settings: {enabled: true}});
    const status = p.cli(['hook', 'status', '--project', p.project], 'hook-status');
    expect(status).toMatchObject({enabled: true, hooks: [{host: 'claude-code', event: 'SessionStart', runs: true}, {host: 'claude-code', event: 'UserPromptSubmit', runs: true}]});
    expect(p.cli(['hook', 'disable', '--project', p.project], 'hook-disable')).toMatchObject({status: 'updated', enabled: false});
    expect(p.cli(['hook', 'uninstall', '--host', 'claude-code', '--project', p.project], 'hook-uninstall')).toMatchObject({status: 'uninstalled'});
    expect(fs.readFileSync(file, 'utf8')).toBe(HAND_WRITTEN);
  });

  it('Codex --project writes .codex/hooks.json and says that the hook runs only once trusted; it never writes trust', () => {
    const p = place();
    const r = p.cli(['hook', 'install', '--host', 'codex', '--project', p.project, '--knowledge', knowledge, '--scenario', 'demo'], 'hook-install');
    expect(r.file).toBe(path.join(p.project, '.codex/hooks.json'));
    expect(r.notes.join('\n')).toMatch(/trust.*\/hooks/);
    expect(fs.existsSync(path.join(p.env.HOME, '.codex/config.toml'))).toBe(false);
    expect(fs.existsSync(path.join(p.project, '.codex/config.toml'))).toBe(false);
  });

  it('refuses a second registration in another layer, a file it cannot parse, and a scenario the tree lacks; --dry-run changes nothing', () => {
    const p = place();
    p.cli(['hook', 'install', '--host', 'claude-code', '--project', p.project, '--knowledge', knowledge, '--scenario', 'demo']);
    const twice = p.cli(['hook', 'install', '--host', 'claude-code', '--user', '--knowledge', knowledge, '--scenario', 'demo'], 'error', 2);
    expect(twice.error.message).toMatch(/already registered in .*settings\.local\.json/);
    const other = place();
    const bad = path.join(other.project, '.claude/settings.local.json');
    fs.mkdirSync(path.dirname(bad), {recursive: true});
    fs.writeFileSync(bad, '{"hooks": ');
    expect(other.cli(['hook', 'install', '--host', 'claude-code', '--project', other.project, '--knowledge', knowledge, '--scenario', 'demo'], 'error', 2).error.code).toBe('CONFIG_INVALID');
    expect(fs.readFileSync(bad, 'utf8')).toBe('{"hooks": ');
    expect(other.cli(['hook', 'install', '--host', 'codex', '--project', other.project, '--knowledge', knowledge, '--scenario', 'nope'], 'error', 2).error.code).toBe('SCENARIO_NOT_FOUND');
    const dry = other.cli(['hook', 'install', '--host', 'codex', '--project', other.project, '--knowledge', knowledge, '--scenario', 'demo', '--dry-run'], 'hook-install');
    expect(dry).toMatchObject({status: 'planned'});
    expect(dry.changes.length).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(other.project, '.codex'))).toBe(false);
    expect(fs.existsSync(path.join(other.env.XDG_CONFIG_HOME, 'autoctx/config.json'))).toBe(false);
    expect(other.cli(['hook', 'install', '--host', 'codex', '--knowledge', knowledge, '--scenario', 'demo'], 'error', 2).error.code).toBe('USAGE');
    expect(other.cli(['hook', 'enable'], 'error', 2).error.message).toMatch(/--project DIR or --user/);
    expect(other.cli(['hook', 'enable', '--project', other.project], 'error', 2).error.message).toMatch(/run autoctx hook install first/);
    expect(fs.existsSync(path.join(other.env.XDG_CONFIG_HOME, 'autoctx/config.json'))).toBe(false);
  });

  it('status names a hook whose node or entry point is gone', () => {
    const p = place();
    const file = path.join(p.project, '.codex/hooks.json');
    fs.mkdirSync(path.dirname(file), {recursive: true});
    fs.writeFileSync(file, JSON.stringify({hooks: {SessionStart: [{matcher: 'startup', hooks: [{type: 'command', command: "'/opt/node-18/bin/node' '/old/autoctx/bin/autoctx-hook.js' session-start --host codex", timeout: 5}]}]}}));
    expect(p.cli(['hook', 'status', '--project', p.project], 'hook-status')).toMatchObject({enabled: false, settings: null, hooks: [{host: 'codex', event: 'SessionStart', runs: false}]});
  });
});
