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
  expect(
    runCli([
      'init',
      '--scenario',
      'demo',
      '--from',
      writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'Check the sync icon first.\n'}),
      '--knowledge',
      knowledge,
    ]).status,
  ).toBe(0);
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

const HAND_WRITTEN =
  '{\n    "permissions": {"allow": ["Bash(ls)"]},\n    // a comment the person wrote\n    "hooks": ' +
  '{\n        "Stop": [ {"hooks": [{"type": "command", "command": "echo bye"}]} ]\n    }\n}\n';

describe('hook install, uninstall, enable, disable, status', () => {
  it(
    'Claude Code --project: merges into .claude/settings.local.json, every ' +
      'other byte kept; twice changes nothing; uninstall gives the bytes back',
    () => {
      const p = place();
      const file = path.join(p.project, '.claude/settings.local.json');
      fs.mkdirSync(path.dirname(file), {recursive: true});
      fs.writeFileSync(file, HAND_WRITTEN);
      const args = [
        'hook',
        'install',
        '--host',
        'claude-code',
        '--project',
        p.project,
        '--knowledge',
        knowledge,
        '--scenario',
        'demo',
      ];
      const first = p.cli(args, 'hook-install');
      expect(first).toMatchObject({status: 'installed', file, settings: {enabled: false}});
      const text = fs.readFileSync(file, 'utf8');
      expect(
        text.startsWith(
          '{\n    "permissions": {"allow": ["Bash(ls)"]},\n    // a comment the person wrote\n    ' +
            '"hooks": {\n        "Stop": [ {"hooks": [{"type": "command", "command": "echo bye"}]} ],\n',
        ),
      ).toBe(true);
      const settings = JSON.parse(text.replace('// a comment the person wrote\n', ''));
      const start = settings.hooks.SessionStart[0];
      expect(start.matcher).toBe('startup|resume|clear|compact|fork');
      expect(start.hooks).toEqual([
        {
          type: 'command',
          command:
            `'${process.execPath}' '${path.join(PROJECT_ROOT, 'bin/autoctx-hook.js')}` +
            `' session-start --host claude-code`,
          timeout: 5,
        },
      ]);
      expect(settings.hooks.UserPromptSubmit[0].hooks[0].command).toMatch(
        /autoctx-hook\.js' user-prompt-submit --host claude-code$/,
      );
      // The command holds no setting and never npx.
      expect(text).not.toMatch(/npx|--knowledge|demo/);
      const config = path.join(p.env.XDG_CONFIG_HOME, 'autoctx/config.json');
      expect(JSON.parse(fs.readFileSync(config, 'utf8')).hooks.projects[p.project]).toEqual({
        knowledge,
        scenario: 'demo',
        enabled: false,
      });
      expect(fs.statSync(config).mode & 0o777).toBe(0o600);
      const before = [fs.readFileSync(file, 'utf8'), fs.readFileSync(config, 'utf8')];
      expect(p.cli(args, 'hook-install')).toMatchObject({status: 'unchanged', changes: []});
      expect([fs.readFileSync(file, 'utf8'), fs.readFileSync(config, 'utf8')]).toEqual(before);
      // The opt-in is the user's: enable, then install again keeps it.
      expect(p.cli(['hook', 'enable', '--project', p.project], 'hook-enable')).toMatchObject({
        status: 'updated',
        enabled: true,
      });
      expect(p.cli(args, 'hook-install')).toMatchObject({status: 'unchanged', settings: {enabled: true}});
      const status = p.cli(['hook', 'status', '--project', p.project], 'hook-status');
      expect(status).toMatchObject({
        enabled: true,
        hooks: [
          {host: 'claude-code', event: 'SessionStart', runs: true},
          {host: 'claude-code', event: 'UserPromptSubmit', runs: true},
        ],
      });
      expect(p.cli(['hook', 'disable', '--project', p.project], 'hook-disable')).toMatchObject({
        status: 'updated',
        enabled: false,
      });
      expect(
        p.cli(['hook', 'uninstall', '--host', 'claude-code', '--project', p.project], 'hook-uninstall'),
      ).toMatchObject({status: 'uninstalled'});
      expect(fs.readFileSync(file, 'utf8')).toBe(HAND_WRITTEN);
    },
  );

  it(
    'Codex --project writes .codex/hooks.json and says that the ' +
      'hook runs only once trusted; it never writes trust',
    () => {
      const p = place();
      const r = p.cli(
        ['hook', 'install', '--host', 'codex', '--project', p.project, '--knowledge', knowledge, '--scenario', 'demo'],
        'hook-install',
      );
      expect(r.file).toBe(path.join(p.project, '.codex/hooks.json'));
      expect(r.notes.join('\n')).toMatch(/trust.*\/hooks/);
      expect(fs.existsSync(path.join(p.env.HOME, '.codex/config.toml'))).toBe(false);
      expect(fs.existsSync(path.join(p.project, '.codex/config.toml'))).toBe(false);
    },
  );

  it(
    'refuses a second registration in another layer, a file it cannot ' +
      'parse, and a scenario the tree lacks; --dry-run changes nothing',
    () => {
      const p = place();
      p.cli([
        'hook',
        'install',
        '--host',
        'claude-code',
        '--project',
        p.project,
        '--knowledge',
        knowledge,
        '--scenario',
        'demo',
      ]);
      const twice = p.cli(
        ['hook', 'install', '--host', 'claude-code', '--user', '--knowledge', knowledge, '--scenario', 'demo'],
        'error',
        2,
      );
      expect(twice.error.message).toMatch(/already registered in .*settings\.local\.json/);
      const other = place();
      const bad = path.join(other.project, '.claude/settings.local.json');
      fs.mkdirSync(path.dirname(bad), {recursive: true});
      fs.writeFileSync(bad, '{"hooks": ');
      expect(
        other.cli(
          [
            'hook',
            'install',
            '--host',
            'claude-code',
            '--project',
            other.project,
            '--knowledge',
            knowledge,
            '--scenario',
            'demo',
          ],
          'error',
          2,
        ).error.code,
      ).toBe('CONFIG_INVALID');
      expect(fs.readFileSync(bad, 'utf8')).toBe('{"hooks": ');
      expect(
        other.cli(
          [
            'hook',
            'install',
            '--host',
            'codex',
            '--project',
            other.project,
            '--knowledge',
            knowledge,
            '--scenario',
            'nope',
          ],
          'error',
          2,
        ).error.code,
      ).toBe('SCENARIO_NOT_FOUND');
      const dry = other.cli(
        [
          'hook',
          'install',
          '--host',
          'codex',
          '--project',
          other.project,
          '--knowledge',
          knowledge,
          '--scenario',
          'demo',
          '--dry-run',
        ],
        'hook-install',
      );
      expect(dry).toMatchObject({status: 'planned'});
      expect(dry.changes.length).toBeGreaterThan(0);
      expect(fs.existsSync(path.join(other.project, '.codex'))).toBe(false);
      expect(fs.existsSync(path.join(other.env.XDG_CONFIG_HOME, 'autoctx/config.json'))).toBe(false);
      expect(
        other.cli(['hook', 'install', '--host', 'codex', '--knowledge', knowledge, '--scenario', 'demo'], 'error', 2)
          .error.code,
      ).toBe('USAGE');
      expect(other.cli(['hook', 'enable'], 'error', 2).error.message).toMatch(/--project DIR or --user/);
      expect(other.cli(['hook', 'enable', '--project', other.project], 'error', 2).error.message).toMatch(
        /run autoctx hook install first/,
      );
      expect(fs.existsSync(path.join(other.env.XDG_CONFIG_HOME, 'autoctx/config.json'))).toBe(false);
    },
  );

  it('status names a hook whose node or entry point is gone', () => {
    const p = place();
    const file = path.join(p.project, '.codex/hooks.json');
    fs.mkdirSync(path.dirname(file), {recursive: true});
    fs.writeFileSync(
      file,
      JSON.stringify({
        hooks: {
          SessionStart: [
            {
              matcher: 'startup',
              hooks: [
                {
                  type: 'command',
                  command: "'/opt/node-18/bin/node' '/old/autoctx/bin/autoctx-hook.js' session-start --host codex",
                  timeout: 5,
                },
              ],
            },
          ],
        },
      }),
    );
    expect(p.cli(['hook', 'status', '--project', p.project], 'hook-status')).toMatchObject({
      enabled: false,
      settings: null,
      hooks: [{host: 'codex', event: 'SessionStart', runs: false}],
    });
  });
});

describe('hand-kept files autoctx will not edit, and the bytes it gives back', () => {
  /** A fresh place, run in process: the host's file for --user, and the CLI with that place's environment. */
  function user(host: 'claude-code' | 'codex') {
    const root = fs.mkdtempSync(path.join(dir, 'user-'));
    const env = {
      HOME: path.join(root, 'home'),
      XDG_CONFIG_HOME: path.join(root, 'home/.config'),
      CODEX_HOME: path.join(root, 'home/.codex'),
    };
    const file =
      host === 'claude-code' ? path.join(env.HOME, '.claude/settings.json') : path.join(env.CODEX_HOME, 'hooks.json');
    const config = path.join(env.XDG_CONFIG_HOME, 'autoctx/config.json');
    const cli = (args: string[]) => runCli([...args, '--json'], {env});
    const install = ['hook', 'install', '--host', host, '--user', '--knowledge', knowledge, '--scenario', 'demo'];
    const uninstall = ['hook', 'uninstall', '--host', host, '--user'];
    return {root, env, file, config, cli, install, uninstall};
  }
  const write = (file: string, text: string) => (
    fs.mkdirSync(path.dirname(file), {recursive: true}), fs.writeFileSync(file, text)
  );

  const duplicated: Array<[string, string]> = [
    ['"hooks" twice at the top', '{\n  "hooks": {"Stop": []},\n  "hooks": {}\n}\n'],
    ['an event twice', '{"hooks": {"SessionStart": [], "Stop": [], "SessionStart": []}}'],
    [
      'a key twice deep inside',
      '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "command": "b"}]}]}}',
    ],
    ['a key twice in another setting', '{"env": {"A": "1", "A": "2"}, "hooks": {}}'],
  ];
  it.each(['claude-code', 'codex'] as const)(
    '%s: a settings file with a key given twice, at any depth, is ' +
      'refused by install, uninstall and status, and left as it is',
    (host) => {
      for (const [name, text] of duplicated) {
        const u = user(host);
        write(u.file, text);
        for (const args of [u.install, u.uninstall, ['hook', 'status', '--user']]) {
          const r = u.cli(args);
          expect([name, args[1], r.status, r.json?.error?.code]).toEqual([name, args[1], 2, 'CONFIG_INVALID']);
          expect(r.json.error.message).toContain(u.file);
          expect(r.json.error.message).toMatch(/appears twice/);
        }
        expect(fs.readFileSync(u.file, 'utf8')).toBe(text);
        expect(fs.existsSync(u.config)).toBe(false);
      }
    },
  );

  it("autoctx's own configuration with a key given twice is refused by install and enable, and left as it is", () => {
    const u = user('claude-code');
    const text = '{"schema_version": 1, "hooks": {"user": {"knowledge": "/a", "scenario": "demo"}}, "hooks": {}}\n';
    write(u.config, text);
    for (const args of [u.install, ['hook', 'enable', '--user']]) {
      const r = u.cli(args);
      expect([args[1], r.status, r.json?.error?.code]).toEqual([args[1], 2, 'CONFIG_INVALID']);
      expect(r.json.error.message).toContain(u.config);
    }
    expect(fs.readFileSync(u.config, 'utf8')).toBe(text);
    expect(fs.existsSync(u.file)).toBe(false);
  });

  it('a settings file nested 5,000 deep is a typed refusal, not a crash, and is left as it is', () => {
    const u = user('claude-code');
    const text = `{"hooks": {}, "deep": ${'['.repeat(5000)}${']'.repeat(5000)}}`;
    write(u.file, text);
    for (const args of [u.install, u.uninstall, ['hook', 'status', '--user']]) {
      const r = u.cli(args);
      expect([args[1], r.status, r.json?.error?.code]).toEqual([args[1], 2, 'CONFIG_INVALID']);
      expect(r.json.error.message).toMatch(/nesting deeper than/);
    }
    expect(fs.readFileSync(u.file, 'utf8')).toBe(text);
  });

  it('~/.config/autoctx that is a file, or a link to one: a typed refusal naming it, and nothing written', () => {
    for (const link of [false, true]) {
      const u = user('claude-code');
      fs.mkdirSync(path.dirname(path.dirname(u.config)), {recursive: true});
      const target = path.join(u.root, 'a-file');
      fs.writeFileSync(target, 'x');
      if (link) fs.symlinkSync(target, path.dirname(u.config));
      else fs.writeFileSync(path.dirname(u.config), 'x');
      for (const args of [u.install, ['hook', 'status', '--user'], ['hook', 'enable', '--user']]) {
        const r = u.cli(args);
        expect([link, args[1], r.status, r.json?.error?.code]).toEqual([link, args[1], 2, 'CONFIG_INVALID']);
        expect(r.json.error.message).toContain(u.config);
      }
      expect(fs.existsSync(u.file)).toBe(false);
      expect(fs.readFileSync(target, 'utf8')).toBe('x');
    }
  });

  // Shapes a person's file may have: empty parts install fills, other content, comments, tabs, no final newline.
  const shapes = [
    '{"hooks": {}}',
    '{"hooks": {}}\n',
    '{\n  "hooks": {\n    "SessionStart": []\n  }\n}\n',
    '{"a": 1, "hooks": {"SessionStart": [], "UserPromptSubmit": []}}\n',
    '{\n\t"model": "x",\n\t"hooks": {\n\t\t"UserPromptSubmit": [],\n\t\t"Stop": ' +
      '[ {"hooks": [{"type": "command", "command": "echo bye"}]} ]\n\t}\n}',
    '// mine\n{\n    "hooks": {}, // nothing yet\n    "env": {}\n}\n',
    '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}\n',
    '{}',
    '{"permissions": {"allow": []}}\n',
  ];
  it.each(['claude-code', 'codex'] as const)(
    '%s: install, install again, uninstall gives back the exact bytes, empty parts included',
    (host) => {
      for (const shape of shapes) {
        const u = user(host);
        write(u.file, shape);
        expect([shape, u.cli(u.install).json?.status]).toEqual([shape, 'installed']);
        const installed = [fs.readFileSync(u.file, 'utf8'), fs.readFileSync(u.config, 'utf8')];
        expect([shape, u.cli(u.install).json?.status]).toEqual([shape, 'unchanged']);
        expect([fs.readFileSync(u.file, 'utf8'), fs.readFileSync(u.config, 'utf8')]).toEqual(installed);
        expect(u.cli(['hook', 'status', '--user']).json.hooks).toHaveLength(2);
        expect([shape, u.cli(u.uninstall).json?.status]).toEqual([shape, 'uninstalled']);
        expect([shape, fs.readFileSync(u.file, 'utf8')]).toEqual([shape, shape]);
        // What install found empty is forgotten with the hooks: the settings are as a plain install leaves them.
        expect(JSON.parse(fs.readFileSync(u.config, 'utf8')).hooks.user).toEqual({
          knowledge,
          scenario: 'demo',
          enabled: false,
        });
      }
    },
  );
});
