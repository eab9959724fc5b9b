import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {reconcile, type ReconcileResult} from '../../src/core/common/reconcile/reconcile.js';
import {verify} from '../../src/core/common/verify.js';
import {rollback} from '../../src/core/rollback/rollback.js';
import {promote} from '../../src/core/promotion/promote.js';
import {reject} from '../../src/core/promotion/reject.js';
import {runCli} from '../helpers/cli.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {treeHash, writeSource} from '../helpers/tree.js';
import {evalArgs, fakeEnv} from '../helpers/pipeline.js';
import {checkout, commitAll, conflicts, git, merge} from '../helpers/git.js';
import {keys} from '../helpers/kind-trees.js';
import {mustIn} from '../helpers/knowledge-cli.js';
import {
  SCENARIOS,
  SCENARIO_DIR,
  STATE_CHANGE,
  bases,
  fork,
  ids,
  join,
  makeBases,
  nothingLost,
  readJson,
  rejected,
  repoOf,
  serving,
  type Resolution,
} from '../helpers/git-team.js';
import {releaseName} from '../../src/core/release/release-name.js';
import {releaseTransition} from '../../src/core/release/release-transition.js';
import {handoffWrite, tagAdd} from '../../src/core/delivery/curation.js';

/** The digest of the first component of the serving bundle (a tag names a component). */
function firstComponent(knowledge: string): string {
  const active = serving(knowledge);
  const bundle = readJson(path.join(SCENARIO_DIR(knowledge), 'context_bundles/bundles', `${active}.json`));
  return bundle.components[0].digest;
}

beforeAll(makeBases, 120_000);

async function reconciled(
  repo: string,
  knowledge: string,
  keep: 'ours' | 'theirs' = 'ours',
  extra = {},
  kinds = STATE_CHANGE,
) {
  const r = await reconcile({knowledge, keep, ...extra});
  expect(r.status).toBe('reconciled');
  const v = verify({knowledge});
  expect(v.errors).toEqual([]);
  // Nothing in the tree is a rejected bundle serving.
  expect(rejected(knowledge)).not.toContain(serving(knowledge));
  nothingLost(repo, knowledge, r, kinds);
  return r;
}

const JOINS: Resolution[] = ['take ours', 'take theirs', '-X ours', '-X theirs'];
const stepOf = (r: ReconcileResult, kind: string) => r.scenarios[0]!.steps.find((s) => s.kind === kind);

describe('reconcile after each naive join: verify clean, nothing lost, no rejected bundle serving', () => {
  for (const how of JOINS) {
    it(`Alice rejects X, Bob promotes X (${how}): the promotion is refused, X never serves`, async () => {
      const {repo, knowledge} = await SCENARIOS['Alice rejects X, Bob promotes X']!();
      join(repo, how);
      const r = await reconciled(repo, knowledge);
      expect(stepOf(r, 'promotion')).toMatchObject({subject: ids.X, outcome: 'refused'});
      expect(serving(knowledge)).toBe(ids.P);
    });

    it(`two promotions from one parent (${how}): the other is a stale rejection with its negative result`, async () => {
      const {repo, knowledge} = await SCENARIOS['two promotions from one parent']!();
      join(repo, how);
      const r = await reconciled(repo, knowledge);
      expect(stepOf(r, 'promotion')).toMatchObject({subject: ids.Y, outcome: 'stale'});
      expect(serving(knowledge)).toBe(ids.X);
      expect(rejected(knowledge)).toContain(ids.Y);
    });
  }

  it("Bob's rollback overridden by Alice's promotion: refused, named, and on record", async () => {
    const {repo, knowledge} = await SCENARIOS["Bob's rollback overridden by Alice's promotion"]!();
    join(repo, 'take theirs');
    const r = await reconciled(repo, knowledge);
    expect(stepOf(r, 'rollback')).toMatchObject({outcome: 'refused', actor: 'bob', rationale: 'incident 7'});
    expect(stepOf(r, 'rollback')!.reason).toMatch(/no longer serves here/);
    expect(serving(knowledge)).toBe(ids.Z);
  });

  it("kept the other way (--keep theirs): Bob's rollback stands and Alice's promotion of Z is stale", async () => {
    const {repo, knowledge} = await SCENARIOS["Bob's rollback overridden by Alice's promotion"]!();
    join(repo, 'take ours');
    const r = await reconciled(repo, knowledge, 'theirs');
    expect(stepOf(r, 'promotion')).toMatchObject({subject: ids.Z, outcome: 'stale'});
    expect(serving(knowledge)).toBe(ids.P);
  });

  it("Bob's epoch rollover against Alice's promotion: refused with the command to run again", async () => {
    const {repo, knowledge} = await SCENARIOS["Bob's epoch rollover undone by Alice's promotion"]!();
    join(repo, '-X theirs');
    const r = await reconciled(repo, knowledge);
    expect(stepOf(r, 'rollover')).toMatchObject({outcome: 'refused'});
    expect(stepOf(r, 'rollover')!.reason).toMatch(/epoch rollover again/);
  });

  it('a rejection beats a promotion of the same bundle: kept the promoting side, X is rolled back', async () => {
    const {repo, knowledge} = await SCENARIOS['Alice rejects X, Bob promotes X']!();
    join(repo, 'take ours');
    const r = await reconciled(repo, knowledge, 'theirs');
    expect(stepOf(r, 'rejection')).toMatchObject({subject: ids.X, outcome: 'applied'});
    expect(serving(knowledge)).not.toBe(ids.X);
  });

  it('two rollbacks of one state on two branches: the second is refused, both rationales on record', async () => {
    const {repo, knowledge} = await fork(
      bases.promoted,
      (k) => rollback({knowledge: k, scenario: 'demo', rationale: 'incident A', actor: 'alice'}),
      (k) => rollback({knowledge: k, scenario: 'demo', rationale: 'incident B', actor: 'bob'}),
    );
    join(repo, 'take ours');
    const r = await reconciled(repo, knowledge);
    expect(stepOf(r, 'rollback')).toMatchObject({outcome: 'refused', rationale: 'incident B'});
  });

  it('a rebase, given its two sides: the same result as the merge', async () => {
    const {repo, knowledge} = await SCENARIOS['two promotions from one parent']!();
    join(repo, 'rebase ours');
    const r = await reconciled(repo, knowledge, 'ours', {ours: 'main', theirs: 'ORIG_HEAD'});
    expect(stepOf(r, 'promotion')).toMatchObject({subject: ids.Y, outcome: 'stale'});
  });
});

describe('reconcile of releases and curation: transitions through the release gate, revisions appended', () => {
  const released = async (k: string) => {
    await releaseName({knowledge: k, scenario: 'demo', version: 'v1', digest: ids.P});
    await releaseName({knowledge: k, scenario: 'demo', version: 'v2', digest: ids.X, rollbackTargets: ['v1']});
    for (const to of ['SHADOW', 'CANARY'])
      await releaseTransition({knowledge: k, scenario: 'demo', version: 'v2', to, scope: 'eu', rationale: to});
  };

  it(
    'the same scope moved on both branches: the other ' + 'move is made again, and the release gate refuses it',
    async () => {
      const {repo, knowledge} = repoOf(bases.siblings);
      await released(knowledge);
      commitAll(repo, 'v2 in canary in eu');
      const t = (k: string, to: string) =>
        releaseTransition({knowledge: k, scenario: 'demo', version: 'v2', to, scope: 'eu', rationale: `to ${to}`});
      checkout(repo, 'bob', true);
      await t(knowledge, 'SHADOW');
      commitAll(repo, 'bob: back to shadow');
      checkout(repo, 'main');
      await t(knowledge, 'ACTIVE');
      commitAll(repo, 'alice: active');
      join(repo, 'take ours');
      expect(verify({knowledge}).errors.length).toBeGreaterThan(0);
      const r = await reconciled(repo, knowledge, 'ours', {}, /\/receipts\//);
      const step = stepOf(r, 'transition')!;
      expect(step.subject).toBe('eu v2 → SHADOW');
      // Alice's ACTIVE stands; Bob's move back to SHADOW is refused by the release gate, with its reason on record.
      expect(step).toMatchObject({outcome: 'refused'});
      expect(step.reason).toMatch(/ACTIVE→SHADOW is not in the transition table/);
      // Both moves are on the one receipt chain the registry stands on: Alice's, then Bob's made again (or refused).
      const history = runCli(['release', 'history', '--scope', 'eu', '--knowledge', knowledge, '--json']);
      expect(history.status).toBe(0);
      expect(JSON.stringify(history.json)).toMatch(/to ACTIVE/);
    },
  );

  it("handoff revisions on both branches: Bob's text becomes the next revision, not lost", async () => {
    const {repo, knowledge} = repoOf(bases.siblings);
    const write = (k: string, text: string) => {
      const file = path.join(path.dirname(repo), `${text.replace(/\W/g, '')}.json`);
      fs.writeFileSync(file, JSON.stringify({notes: text}));
      return handoffWrite({knowledge: k, scenario: 'demo', id: 'release-notes', from: file});
    };
    await write(knowledge, 'first');
    commitAll(repo, 'notes 1');
    checkout(repo, 'bob', true);
    await write(knowledge, 'bob says');
    await tagAdd({knowledge, scenario: 'demo', digest: firstComponent(knowledge)});
    commitAll(repo, 'bob');
    checkout(repo, 'main');
    await write(knowledge, 'alice says');
    commitAll(repo, 'alice');
    join(repo, '-X ours');
    const r = await reconciled(repo, knowledge, 'ours', {}, /\/curation_history\//);
    expect(stepOf(r, 'handoff')).toMatchObject({subject: 'release-notes', outcome: 'applied'});
    expect(stepOf(r, 'curation')).toMatchObject({outcome: 'applied'});
    const show = (ref: string) => runCli(['handoff', 'show', ref, '--knowledge', knowledge, '--json']).json;
    expect(JSON.stringify(show('release-notes@2'))).toMatch(/alice says/);
    expect(JSON.stringify(show('release-notes@3'))).toMatch(/bob says/);
  });
});

describe('reconcile as a user runs it', () => {
  it(
    'in the middle of a merge with conflicts in the index: ' + '--dry-run writes nothing, then reconcile, add, commit',
    async () => {
      const {repo, knowledge} = await SCENARIOS['two promotions from one parent']!();
      expect(merge(repo, 'bob').length).toBeGreaterThan(0);
      const before = treeHash(knowledge);
      const unknown = runCli(['reconcile', '--scenario', 'nope', '--knowledge', knowledge]);
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toMatch(/^error SCENARIO_NOT_FOUND: neither side of the merge has scenario "nope"\n$/);
      expect(treeHash(knowledge)).toBe(before);
      const dry = runCli(['reconcile', '--dry-run', '--scenario', 'demo', '--knowledge', knowledge]);
      expect(dry.status).toBe(0);
      expect(dry.stdout).toMatch(/promotion [0-9a-f]{64} .* → stale/);
      expect(dry.stdout).toMatch(/dry run: nothing was written/);
      expect(treeHash(knowledge)).toBe(before);
      const run = runCli(['reconcile', '--knowledge', knowledge, '--json']);
      expect(run.status).toBe(0);
      expect(run.json.status).toBe('reconciled');
      expect(resultSchemaProblem('result-reconcile', run.json)).toBeNull();
      expect(
        resultSchemaProblem('result-reconcile', JSON.parse(JSON.stringify({...run.json, status: 'x'}))),
      ).not.toBeNull();
      git(repo, ['add', '-A', 'knowledge']);
      expect(conflicts(repo)).toEqual([]);
      commitAll(repo, 'merge bob, reconciled');
      expect(runCli(['verify', '--knowledge', knowledge]).status).toBe(0);
      // The story of both branches: log names the reconcile and what became of Bob's promotion.
      const log = runCli(['log', '--knowledge', knowledge]);
      expect(log.stdout).toMatch(/reconcile/);
    },
  );

  it(
    'a signed tree: the changes made again are signed with ' + '--signing-key; without a key nothing is written',
    async () => {
      const {repo, knowledge} = repoOf(bases.siblings);
      const k = keys(path.dirname(repo));
      const signed = ['--signing-key', k.key, '--actor', 'alice@x'];
      mustIn(knowledge, ['signing', 'start', '--from', k.signers, ...signed]);
      commitAll(repo, 'signing starts');
      checkout(repo, 'bob', true);
      mustIn(knowledge, ['promote', ids.Y, ...signed]);
      // Bob also proposes and confirms a new candidate (a signed evaluation, taken as it stood).
      const env = {AUTOCTX_SIGNING_KEY: k.key, AUTOCTX_ACTOR: 'alice@x'};
      const src = writeSource(path.join(path.dirname(repo), 'kind'), {'playbook/playbook.md': 'Be kind.\n'});
      const c = mustIn(knowledge, ['propose', '--from', src, '--run-id', 'kind'], 0, env).bundle_digest;
      mustIn(knowledge, ['confirm', c, ...evalArgs()], 0, {...fakeEnv(path.dirname(repo)), ...env});
      commitAll(repo, 'bob promotes Y, confirms a candidate');
      checkout(repo, 'main');
      mustIn(knowledge, ['promote', ids.X, ...signed]);
      commitAll(repo, 'alice promotes X');
      expect(merge(repo, 'bob').length).toBeGreaterThan(0);
      const before = treeHash(knowledge);
      const refused = runCli(['reconcile', '--knowledge', knowledge]);
      expect(refused.status).toBe(2);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toMatch(
        /SIGNING_KEY_REQUIRED: .*reconcile makes the other side's changes again as signed/,
      );
      expect(treeHash(knowledge)).toBe(before);
      const done = runCli(['reconcile', '--knowledge', knowledge, ...signed, '--json']);
      expect(done.status).toBe(0);
      const told = done.json.scenarios[0].steps.map((x: {kind: string; outcome: string}) => `${x.kind} ${x.outcome}`);
      expect(told).toEqual(['candidate kept', 'promotion stale']);
      const v = runCli(['verify', '--knowledge', knowledge, '--allowed-signers', k.signers, '--json']);
      expect({status: v.status, errors: v.json.errors, warnings: v.json.warnings}).toEqual({
        status: 0,
        errors: [],
        warnings: [],
      });
    },
  );

  it(
    'a merge committed with -s ours verifies but lost the other ' + "side's rejection: reconcile makes it again",
    async () => {
      const {repo, knowledge} = await fork(
        bases.siblings,
        (k) => promote({knowledge: k, scenario: 'demo', candidate: ids.X}),
        (k) => reject({knowledge: k, scenario: 'demo', candidate: ids.Y, rationale: 'too brief'}),
      );
      git(repo, ['merge', '-q', '--no-edit', '-s', 'ours', 'bob']);
      expect(verify({knowledge}).errors).toEqual([]);
      expect(rejected(knowledge)).not.toContain(ids.Y);
      const r = await reconciled(repo, knowledge);
      expect(stepOf(r, 'rejection')).toMatchObject({subject: ids.Y, outcome: 'applied'});
      expect(rejected(knowledge)).toContain(ids.Y);
    },
  );

  it(
    "a file of the user's own that git does not track stays; " + 'uncommitted changes outside a merge are refused',
    async () => {
      const {repo, knowledge} = await SCENARIOS['two promotions from one parent']!();
      join(repo, 'take ours');
      const mine = path.join(knowledge, 'demo', 'NOTES.txt');
      fs.writeFileSync(mine, 'my own notes\n');
      const before = treeHash(knowledge);
      const refused = runCli(['reconcile', '--knowledge', knowledge]);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(
        /^error USAGE: the knowledge tree has changes that are not committed .*NOTES\.txt/,
      );
      expect(treeHash(knowledge)).toBe(before);
      // In the middle of a merge the same file is left as it is.
      const {repo: r2, knowledge: k2} = await SCENARIOS['two promotions from one parent']!();
      expect(merge(r2, 'bob').length).toBeGreaterThan(0);
      fs.writeFileSync(path.join(k2, 'demo', 'NOTES.txt'), 'my own notes\n');
      expect((await reconcile({knowledge: k2})).status).toBe('reconciled');
      expect(fs.readFileSync(path.join(k2, 'demo', 'NOTES.txt'), 'utf8')).toBe('my own notes\n');
    },
  );

  it('nothing to reconcile on a clean tree; bad flags refused in one line, the tree unchanged', async () => {
    const {repo, knowledge} = await fork(
      bases.siblings,
      async () => {},
      async () => {},
    );
    expect(merge(repo, 'bob')).toEqual([]);
    const before = treeHash(knowledge);
    expect(runCli(['reconcile', '--knowledge', knowledge]).stdout).toMatch(/nothing to reconcile/);
    const bad = runCli(['reconcile', '--knowledge', knowledge, '--base', 'no-such-rev']);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/--base: "no-such-rev" is not a commit/);
    const keep = runCli(['reconcile', '--knowledge', knowledge, '--keep', 'mine']);
    expect(keep.status).toBe(2);
    expect(treeHash(knowledge)).toBe(before);
  });
});
