import {spawnSync, type SpawnSyncReturns} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir} from '../helpers/tree.js';

/**
 * The team workflow of docs/ci/ against real git repositories: the GitHub
 * Actions workflow runs docs/ci/pull-request.sh on every pull request and
 * docs/ci/promote.sh on main; these tests run the same scripts, with the same
 * environment, on a bare remote and its clones.
 */
const CI = path.join(PROJECT_ROOT, 'docs/ci');
const AUTOCTX = `${process.execPath} ${path.join(PROJECT_ROOT, 'bin/run.js')}`;

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {cwd, encoding: 'utf8'});
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

function sh(cwd: string, script: string, env: NodeJS.ProcessEnv): SpawnSyncReturns<string> {
  return spawnSync('sh', [path.join(CI, script)], {
    cwd,
    encoding: 'utf8',
    env: {...process.env, AUTOCTX, AUTOCTX_ACTOR: 'ci', ...env},
  });
}

function identity(repo: string, who: string): void {
  git(repo, 'config', 'user.name', who);
  git(repo, 'config', 'user.email', `${who}@example.test`);
  git(repo, 'config', 'commit.gpgsign', 'false');
}

/** A bare remote whose main holds a knowledge tree with a baseline, and the tree's first clone (the tree's folder). */
function team(): {tree: Tree; remote: string; clone: (name: string) => string} {
  const tree = makeTree();
  const repo = tree.dir;
  git(repo, 'init', '--quiet', '--initial-branch=main');
  identity(repo, 'alice');
  git(repo, 'add', 'knowledge');
  git(repo, 'commit', '--quiet', '-m', 'knowledge: baseline');
  const remote = path.join(tempDir('autoctx-remote-'), 'origin.git');
  git(path.dirname(remote), 'init', '--quiet', '--bare', '--initial-branch=main', remote);
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '--quiet', 'origin', 'main');
  const clone = (name: string) => {
    const dir = path.join(tempDir('autoctx-clone-'), name);
    git(path.dirname(dir), 'clone', '--quiet', remote, dir);
    identity(dir, name);
    return dir;
  };
  return {tree, remote, clone};
}

/** Propose and confirm a candidate in `tree` with the fake evaluator; its digest. */
function confirmed(tree: Tree, name: string, playbook: string): string {
  const digest = tree.propose(name, {
    'playbook/playbook.md': playbook,
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  const r = tree.cli(['confirm', digest, ...evalArgs()], fakeEnv(tree.dir));
  if (r.json?.status !== 'confirmed') throw new Error(r.stdout + r.stderr);
  return digest;
}

const activeOf = (repo: string) =>
  JSON.parse(fs.readFileSync(path.join(repo, 'knowledge/demo/context_bundles/active.json'), 'utf8')).bundle_digest;

describe('the team workflow (docs/ci)', () => {
  it('the workflow file runs the two scripts these tests run', () => {
    const workflow = fs.readFileSync(path.join(CI, 'autoctx.yml'), 'utf8');
    expect(workflow).toMatch(/run: sh docs\/ci\/pull-request\.sh\n/);
    expect(workflow).toMatch(/run: sh docs\/ci\/promote\.sh\n/);
    expect(workflow).toMatch(/group: autoctx-main\n\s+cancel-in-progress: false/);
    expect(workflow).toMatch(/fetch-depth: 0/);
  });

  it(
    'a pull request that proposes and confirms passes, with its ' +
      'report; one that deletes or rewrites history fails',
    () => {
      const {tree} = team();
      const repo = tree.dir;
      git(repo, 'switch', '--quiet', '-c', 'better-playbook');
      const c = confirmed(tree, 'better', 'Be helpful, precise and brief.\n');
      git(repo, 'add', 'knowledge');
      git(repo, 'commit', '--quiet', '-m', 'knowledge: propose and confirm a better playbook');
      const summary = path.join(repo, 'summary.md');
      const ok = sh(repo, 'pull-request.sh', {BASE: 'main', GITHUB_STEP_SUMMARY: summary});
      expect(ok.stderr).toBe('');
      expect(ok.status).toBe(0);
      expect(ok.stdout).toMatch(/verified: 1 scenario/);
      const report = fs.readFileSync(summary, 'utf8');
      expect(report).toContain(c.slice(0, 12));

      // A branch that deletes an entry main recorded: verify sees the cut chain, and --extends names the entry.
      git(repo, 'switch', '--quiet', '-c', 'hostile', 'main');
      const history = path.join(repo, `knowledge/demo/context_bundles/candidates/${tree.baseline}/record_history`);
      const entries = fs.readdirSync(history).sort();
      fs.rmSync(path.join(history, entries[entries.length - 1]!));
      git(repo, 'commit', '--quiet', '-am', 'drop an entry');
      const deleted = sh(repo, 'pull-request.sh', {BASE: 'main', GITHUB_STEP_SUMMARY: summary});
      expect(deleted.status).toBe(8);
      const extendsMain = () =>
        spawnSync(
          process.execPath,
          [path.join(PROJECT_ROOT, 'bin/run.js'), 'verify', '--knowledge', 'knowledge', '--extends', 'main'],
          {cwd: repo, encoding: 'utf8'},
        );
      const cut = extendsMain();
      expect(cut.status).toBe(8);
      expect(cut.stdout).toContain(
        `HISTORY_REWRITTEN demo/context_bundles/candidates/` +
          `${tree.baseline}/record_history/${entries.at(-1)} is on main`,
      );
      expect(cut.stdout).toMatch(/was deleted here/);

      // A branch that rewrites a bundle main recorded, keeping it parseable.
      git(repo, 'switch', '--quiet', '-c', 'rewrite', 'main');
      const bundle = path.join(repo, `knowledge/demo/context_bundles/bundles/${tree.baseline}.json`);
      fs.appendFileSync(bundle, '\n');
      git(repo, 'commit', '--quiet', '-am', 'rewrite a bundle');
      const rewritten = extendsMain();
      expect(rewritten.status).toBe(8);
      expect(rewritten.stdout).toContain(
        `HISTORY_REWRITTEN demo/context_bundles/bundles/${tree.baseline}.json differs`,
      );
    },
  );

  it(
    'promotes on main through the remote; a promotion that loses ' + 'the push race runs again and is refused as stale',
    () => {
      const {tree, remote, clone} = team();
      const repo = tree.dir;
      // Two candidates from one parent, confirmed on branches and merged into main.
      const a = confirmed(tree, 'a', 'Answer in one paragraph.\n');
      const b = confirmed(tree, 'b', 'Answer with numbered steps.\n');
      git(repo, 'add', 'knowledge');
      git(repo, 'commit', '--quiet', '-m', 'knowledge: two confirmed candidates');
      git(repo, 'push', '--quiet', 'origin', 'main');

      const bob = clone('bob');
      const carol = clone('carol');
      // Carol's push loses a race: while her push runs, Bob's promotion of `a` lands first (a pre-push hook, once).
      const hook = path.join(carol, '.git/hooks/pre-push');
      const marker = path.join(carol, '.git/raced');
      fs.writeFileSync(
        hook,
        `#!/bin/sh\n[ -e '${marker}' ] && exit 0\n: > '${marker}'\n` +
          `cd '${bob}' && CANDIDATE=${a} AUTOCTX='${AUTOCTX}' AUTOCTX_ACTOR=bob sh '${CI}/promote.sh' >/dev/null\n`,
        {mode: 0o755},
      );
      const r = sh(carol, 'promote.sh', {CANDIDATE: b});
      expect(r.stderr).toContain('moved while promoting; promoting again on the new main');
      // The second attempt ran on Bob's main: b's parent no longer serves, so b is rejected as stale (exit 6).
      expect(r.status).toBe(6);

      const check = clone('check');
      expect(activeOf(check)).toBe(a);
      const log = git(check, 'log', '--format=%s', 'main');
      expect(log.split('\n').slice(0, 2)).toEqual([`autoctx promote ${b} (exit 6)`, `autoctx promote ${a} (exit 0)`]);
      const record = JSON.parse(
        fs.readFileSync(path.join(check, `knowledge/demo/context_bundles/candidates/${b}/record.json`), 'utf8'),
      );
      expect(record.lifecycle).toBe('rejected');
      expect(
        fs.existsSync(path.join(check, `knowledge/demo/context_bundles/candidates/${b}/negative_result.json`)),
      ).toBe(true);
      const verified = spawnSync(
        process.execPath,
        [path.join(PROJECT_ROOT, 'bin/run.js'), 'verify', '--knowledge', 'knowledge', '--extends', 'HEAD~2'],
        {cwd: check, encoding: 'utf8'},
      );
      expect(verified.stdout).toMatch(/verified: .* 0 errors/);
      expect(verified.status).toBe(0);
      expect(git(path.dirname(remote), '--git-dir', remote, 'rev-list', '--count', 'main')).toBe('4');
    },
  );

  it('refuses a revision that is not a commit, and a root outside git, with one line each (exit 2)', () => {
    const {tree} = team();
    const run = (cwd: string, knowledge: string, rev: string) =>
      spawnSync(
        process.execPath,
        [path.join(PROJECT_ROOT, 'bin/run.js'), 'verify', '-k', knowledge, '--extends', rev],
        {
          cwd,
          encoding: 'utf8',
        },
      );
    const unknown = run(tree.dir, 'knowledge', 'no-such-branch');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toContain('"no-such-branch" is not a commit');
    const option = run(tree.dir, 'knowledge', '--output=x');
    expect(option.status).toBe(2);
    const outside = makeTree();
    const bare = run(outside.dir, 'knowledge', 'main');
    expect(bare.status).toBe(2);
    expect(bare.stderr).toMatch(/^error GIT_UNAVAILABLE: git rev-parse in .*: not a git repository/);
    fs.rmSync(outside.dir, {recursive: true, force: true});
  });
});
