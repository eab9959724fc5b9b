import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from '@jest/globals';
import {readUserConfig, userConfigPath} from '../../src/store/index.js';
import {FAKE, FIXTURES_12, POLICY_SMALL, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';

// Team defaults in a committed knowledge/autoctx.config.json; flags override it; a malformed one
// fails only the commands that read it; nothing that decides trust comes from it.
const trees: Tree[] = [];
afterEach(() => trees.splice(0).forEach((t) => fs.rmSync(t.dir, {recursive: true, force: true})));
const B = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};

function withConfig(config: unknown): Tree {
  const t = makeTree();
  trees.push(t);
  fs.writeFileSync(
    path.join(t.knowledge, 'autoctx.config.json'),
    typeof config === 'string' ? config : JSON.stringify(config, null, 2),
  );
  return t;
}
const teamConfig = (over: Record<string, unknown> = {}) => ({
  schema_version: 1,
  defaults: {evaluator: 'node nowhere.js', fixtures: path.relative('', FIXTURES_12), concurrency: 2},
  scenarios: {demo: {evaluator: `node ${FAKE}`, evaluator_mode: 'persistent', policy: POLICY_SMALL, ...over}},
});

describe('knowledge/autoctx.config.json', () => {
  it(
    'gives confirm its evaluator, mode, fixtures, policy and ' +
      'concurrency (the scenario over the defaults); a flag overrides it',
    () => {
      const t = withConfig(teamConfig());
      // Paths in the file are relative to the knowledge root.
      const cfg = teamConfig();
      cfg.defaults.fixtures = path.relative(t.knowledge, FIXTURES_12);
      fs.writeFileSync(path.join(t.knowledge, 'autoctx.config.json'), JSON.stringify(cfg));
      const c = t.propose('c', B);
      const r = t.cli(['confirm', c, '--quiet'], fakeEnv(t.dir));
      expect([r.status, r.json.status]).toEqual([0, 'confirmed']);
      const plan = JSON.parse(fs.readFileSync(t.file(`candidates/${c}/evaluator_plan.json`), 'utf8'));
      expect(plan.plan.candidate_evaluator.evaluator).toMatchObject({command: `node ${FAKE}`, mode: 'persistent'});
      expect(plan.plan.confirmation_policy).toEqual({
        ...plan.plan.confirmation_policy,
        ...JSON.parse(fs.readFileSync(POLICY_SMALL, 'utf8')),
      });
      // A flag wins over the file: another evaluator is refused as a change of the bound one.
      const d = t.propose('d', {...B, 'hints/hints.md': 'd\n'});
      const flagged = t.cli(['screen', d, '--evaluator', `node ${FAKE} --flagged`, '--quiet'], fakeEnv(t.dir));
      expect(flagged.status).toBe(0);
      expect(
        JSON.parse(fs.readFileSync(t.file(`candidates/${d}/evaluator_plan.json`), 'utf8')).plan.candidate_evaluator
          .evaluator.command,
      ).toBe(`node ${FAKE} --flagged`);
    },
  );

  it('what neither a flag nor the file gives is a usage error naming both, and nothing is written', () => {
    const t = withConfig({schema_version: 1});
    const c = t.propose('c', B);
    const before = treeHash(t.knowledge);
    const r = t.cli(['confirm', c, '--fixtures', FIXTURES_12]);
    expect([r.status, r.json.error.code, r.json.error.message]).toEqual([
      2,
      'USAGE',
      '--evaluator is required: give it, or set "evaluator" in autoctx.config.json at the knowledge root',
    ]);
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it.each([
    ['not JSON', '{"schema_version": 1,'],
    ['an unknown key', JSON.stringify({schema_version: 1, defaults: {evaluater: 'x'}})],
    ['a wrong type', JSON.stringify({schema_version: 1, defaults: {concurrency: 'many'}})],
    ['a trust setting (a signing key)', JSON.stringify({schema_version: 1, signing_key: '~/.ssh/id_ed25519'})],
    ['a trust setting (the hook opt-in)', JSON.stringify({schema_version: 1, defaults: {hooks: {enabled: true}}})],
  ])(
    '%s: the commands that read it fail with one line naming it (CONFIG_INVALID, exit 2); the others are not touched',
    (_what, text) => {
      const t = withConfig(text);
      const c = t.propose('c', B);
      const before = treeHash(t.knowledge);
      for (const args of [
        ['confirm', c, '--evaluator', `node ${FAKE}`, '--fixtures', FIXTURES_12],
        ['screen', c],
        ['evaluator', 'check'],
      ]) {
        const r = t.cli(args);
        expect([args[0], r.status, r.json.error.code]).toEqual([args[0], 2, 'CONFIG_INVALID']);
        expect(r.json.error.message).toMatch(/^autoctx\.config\.json[: ]/);
      }
      expect(treeHash(t.knowledge)).toBe(before);
      for (const args of [['status'], ['verify'], ['log']]) expect([args[0], t.cli(args).status]).toEqual([args[0], 0]);
    },
  );

  it('plan export takes the fixtures and policy from the file, never an evaluator (it names an engine)', () => {
    const cfg = teamConfig();
    const t = withConfig(cfg);
    cfg.defaults.fixtures = path.relative(t.knowledge, FIXTURES_12);
    fs.writeFileSync(path.join(t.knowledge, 'autoctx.config.json'), JSON.stringify(cfg));
    const c = t.propose('c', B);
    const r = t.cli(['plan', 'export', c, '--engine', 'remote-v1', '--out', path.join(t.dir, 'u.jsonl')]);
    expect(r.status).toBe(0);
    expect(
      JSON.parse(fs.readFileSync(t.file(`candidates/${c}/evaluator_plan.json`), 'utf8')).plan.candidate_evaluator
        .evaluator,
    ).toMatchObject({command: 'remote-v1', mode: 'external'});
  });
});

describe('the per-user settings file', () => {
  it(
    'lives under $XDG_CONFIG_HOME/autoctx (default ~/.config/autoctx); ' +
      'absent, valid or malformed, it is read only when asked',
    () => {
      const dir = tempDir('autoctx-user-');
      try {
        const env = {XDG_CONFIG_HOME: dir};
        expect(userConfigPath(env)).toBe(path.join(dir, 'autoctx', 'config.json'));
        expect(userConfigPath({HOME: '/home/x'}).endsWith(path.join('.config', 'autoctx', 'config.json'))).toBe(true);
        expect(readUserConfig(env)).toEqual({schema_version: 1});
        fs.mkdirSync(path.join(dir, 'autoctx'));
        fs.writeFileSync(
          userConfigPath(env),
          JSON.stringify({schema_version: 1, hooks: {enabled: true}, signing_key: '/home/x/.ssh/id_ed25519'}),
        );
        expect(readUserConfig(env)).toEqual({
          schema_version: 1,
          hooks: {enabled: true},
          signing_key: '/home/x/.ssh/id_ed25519',
        });
        fs.writeFileSync(userConfigPath(env), JSON.stringify({schema_version: 1, evaluator: 'x'}));
        expect(() => readUserConfig(env)).toThrow(
          expect.objectContaining({code: 'CONFIG_INVALID', message: expect.stringContaining(userConfigPath(env))}),
        );
        // No command of today reads it: a malformed one changes nothing for them.
        const t = makeTree();
        trees.push(t);
        expect(t.cli(['status'], env).status).toBe(0);
      } finally {
        fs.rmSync(dir, {recursive: true, force: true});
      }
    },
  );
});
