import {spawn} from 'node:child_process';
import {createHash} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {rollback} from '../../src/core/rollback/rollback.js';
import {releaseShow} from '../../src/core/release/release.js';
import {rollbackApprove, rollbackList, rollbackShow} from '../../src/core/rollback/rollback-records.js';
import {status} from '../../src/core/common/status.js';
import {verify} from '../../src/core/common/verify.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {cliIn, copyTree, mustIn} from '../helpers/knowledge-cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir, treeHash, writeSource} from '../helpers/tree.js';

/**
 * The rollback service: every condition, refused
 * and executed, with its record; the emergency path and its second
 * approver; expiry by an injected clock; scopes.
 */
let t: Tree;
/** v1 the baseline, v2 (declares v1) promoted and serving, v3 confirmed, never served. */
let template: string;
/** The same, and in scope eu: v2 ACTIVE, then v3 (declares v2 for eu) ACTIVE in its place. */
let scoped: string;

const ROLLBACKS = 'demo/context_bundles/rollbacks';
const DAY = 86_400_000;

const cli = cliIn;
const must = mustIn;
const copy = (from: string, label: string) => copyTree(from, 'autoctx-rbx', label);
/** Everything but the execution records (and their folder): a refusal writes its record and nothing else. */
const besideRecords = (knowledge: string) =>
  treeHash(knowledge, (rel) => rel === ROLLBACKS || (rel.startsWith(`${ROLLBACKS}/RBX-`) && rel.endsWith('.json')));
const records = (knowledge: string) =>
  fs.existsSync(path.join(knowledge, ROLLBACKS))
    ? fs
        .readdirSync(path.join(knowledge, ROLLBACKS))
        .filter((f) => f.startsWith('RBX-'))
        .sort()
    : [];
const activeOf = (knowledge: string) =>
  JSON.parse(fs.readFileSync(path.join(knowledge, 'demo/context_bundles/active.json'), 'utf8'));
const stateOf = (knowledge: string, version: string, scope = 'global') =>
  must(knowledge, ['release', 'show', version]).states.find((s: {scope: string}) => s.scope === scope)?.state;
/** What a command prints with --json: the result, through JSON. */
const asJson = (x: unknown) => JSON.parse(JSON.stringify(x));
/** A release's state in a scope, as releaseShow reports it. */
const releaseStateOf = (knowledge: string, version: string, scope = 'global') =>
  releaseShow({knowledge, version}).states.find((s) => s.scope === scope)?.state;
const failed = (r: {conditions: Array<{code: string; passed: boolean}>}) =>
  r.conditions.filter((c) => !c.passed).map((c) => c.code);

let a: string;
let b: string;

beforeAll(() => {
  t = makeTree();
  a = t.propose('better', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  b = t.propose('other', {
    'playbook/playbook.md': 'Be helpful, precise and kind.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  must(t.knowledge, ['confirm', a, ...evalArgs()], 0, fakeEnv(t.dir));
  must(t.knowledge, ['confirm', b, ...evalArgs()], 0, fakeEnv(t.dir, {FAKE_DELTA: '0.5', FAKE_NOISE: '0.01'}));
  must(t.knowledge, ['release', 'name', 'v1', t.baseline]);
  must(t.knowledge, ['release', 'name', 'v2', a, '--rollback-target', 'v1']);
  must(t.knowledge, ['release', 'name', 'v3', b]);
  template = copy(t.knowledge, 'template');
  must(template, ['promote', a]);
  // Scope eu: v2 becomes ACTIVE there (v2 and v3 are confirmed against the bundle active.json names: the baseline).
  scoped = copy(t.knowledge, 'scoped');
  for (const [v, to] of [
    ['v2', 'SHADOW'],
    ['v2', 'CANARY'],
    ['v2', 'ACTIVE'],
  ])
    must(scoped, ['release', 'transition', v!, '--to', to!, '--scope', 'eu', '--rationale', `${v} ${to}`]);
}, 180_000);

describe('rollback in the global scope', () => {
  // On the library (core/rollback): what a rollback decides and writes. The CLI's JSON of the same, once, at the end.
  it(
    'executes to the recorded target: every condition passed and ' + 'recorded, v2 DEPRECATED, v1 ACTIVE, verify clean',
    async () => {
      const k = copy(template, 'executed');
      const r = asJson(await rollback({knowledge: k, rationale: 'quality dropped', actor: 'alice'}));
      expect(resultSchemaProblem('result-rollback', r)).toBeNull();
      expect(r).toMatchObject({
        status: 'rolled_back',
        execution_status: 'EXECUTED',
        scope: 'global',
        from_version: 'v2',
        to_version: 'v1',
        bundle_digest: t.baseline,
        emergency: false,
      });
      expect(r.execution_key).toMatch(/^RBX-\d{14}-[0-9a-f]{8}$/);
      expect(r.conditions.map((c: {code: string; passed: boolean}) => [c.code, c.passed])).toEqual([
        ['FROM_IS_ACTIVE', true],
        ['TARGET_DECLARED', true],
        ['TARGET_SERVED', true],
        ['TARGET_NOT_RETIRED', true],
        ['TARGET_NOT_REJECTED', true],
        ['TARGET_VERIFIES', true],
        ['TARGET_RUNNABLE', true],
        ['RATIONALE_GIVEN', true],
      ]);
      expect(activeOf(k)).toMatchObject({
        bundle_digest: t.baseline,
        rollback_target_digest: a,
        promotion_id: null,
        rationale: 'rollback: quality dropped',
      });
      expect([releaseStateOf(k, 'v1'), releaseStateOf(k, 'v2')]).toEqual(['ACTIVE', 'DEPRECATED']);
      const stored = JSON.parse(fs.readFileSync(path.join(k, ROLLBACKS, `${r.execution_key}.json`), 'utf8'));
      expect(stored).toMatchObject({
        status: 'EXECUTED',
        actor: 'alice',
        rationale: 'quality dropped',
        conditions: r.conditions,
      });
      const shown = asJson(rollbackShow({knowledge: k, key: r.execution_key}));
      expect(resultSchemaProblem('result-rollback-show', shown)).toBeNull();
      expect(shown.view.status).toBe('EXECUTED');
      expect(verify({knowledge: k}).errors).toEqual([]);
      // The command prints the same result and the same record (its JSON, exit 0).
      const printed = must(copy(template, 'executed-cli'), [
        'rollback',
        '--rationale',
        'quality dropped',
        '--actor',
        'alice',
      ]);
      expect(resultSchemaProblem('result-rollback', printed)).toBeNull();
      expect({...printed, execution_key: null, rollback_id: null}).toEqual({
        ...r,
        execution_key: null,
        rollback_id: null,
      });
      expect(resultSchemaProblem('result-rollback-show', must(k, ['rollback', 'show', r.execution_key]))).toBeNull();
      // A record written before TARGET_NOT_REJECTED was checked (the other seven, in order) still verifies; any other
      // list does not.
      const file = path.join(k, ROLLBACKS, `${r.execution_key}.json`);
      const older = copy(k, 'older-record');
      const seven = stored.conditions.filter((c: {code: string}) => c.code !== 'TARGET_NOT_REJECTED');
      fs.writeFileSync(
        path.join(older, ROLLBACKS, `${r.execution_key}.json`),
        JSON.stringify({...stored, conditions: seven}),
      );
      expect(verify({knowledge: older}).errors).toEqual([]);
      fs.writeFileSync(
        path.join(older, ROLLBACKS, `${r.execution_key}.json`),
        JSON.stringify({...stored, conditions: seven.slice(1)}),
      );
      expect(verify({knowledge: older}).errors.map((e) => e.code)).toEqual(['DIGEST_MISMATCH']);
      expect(fs.existsSync(file)).toBe(true);
    },
  );

  it(
    'with --to: a declared target executes; an undeclared one is ' +
      'refused (exit 3), recorded, and nothing else changes',
    () => {
      const k = copy(template, 'to');
      const before = besideRecords(k);
      const refused = cli(k, ['rollback', '--to', 'v3', '--rationale', 'try v3']);
      expect(refused.status).toBe(3);
      expect(refused.json).toMatchObject({status: 'refused', execution_status: 'REFUSED', to_version: 'v3'});
      expect(failed(refused.json)).toEqual(['TARGET_DECLARED', 'TARGET_SERVED']);
      expect(besideRecords(k)).toBe(before);
      expect(records(k)).toEqual([`${refused.json.execution_key}.json`]);
      const done = must(k, ['rollback', '--to', 'V1', '--reason', 'back to v1']);
      expect(done).toMatchObject({status: 'rolled_back', to_version: 'v1', bundle_digest: t.baseline});
      expect(must(k, ['rollback', 'list']).executions.map((e: {status: string}) => e.status)).toEqual([
        'REFUSED',
        'EXECUTED',
      ]);
      expect(must(k, ['verify']).errors).toEqual([]);
    },
  );

  it(
    '"has served" is one definition: the release that serves now has served, for rollback ' +
      'and for release name alike; a rollback to it is refused as undeclared, never as unserved',
    () => {
      const k = copy(template, 'serving');
      must(k, ['rollback', '--rationale', 'back to v1']);
      expect(activeOf(k).bundle_digest).toBe(t.baseline);
      // v1 serves now: release name accepts it as a rollback target that has served in scope global.
      const c = must(k, [
        'propose',
        '--from',
        writeSource(path.join(path.dirname(k), 'c'), {
          'playbook/playbook.md': 'Be brief.\n',
          'routing_config/roles.json': '{"model_competitor": "small"}',
        }),
      ]).bundle_digest;
      must(k, ['release', 'name', 'v4', c, '--rollback-target', 'v1']);
      const before = besideRecords(k);
      const r = cli(k, ['rollback', '--to', 'v1', '--rationale', 'v1 again']);
      expect([r.status, r.json.status, failed(r.json)]).toEqual([3, 'refused', ['TARGET_DECLARED']]);
      const served = r.json.conditions.find((c: {code: string}) => c.code === 'TARGET_SERVED');
      expect(served).toEqual({code: 'TARGET_SERVED', passed: true, detail: 'v1 has served in scope global'});
      expect(r.json.conditions.find((c: {code: string}) => c.code === 'TARGET_DECLARED').detail).toBe(
        'v1 is what scope global serves now: a rollback restores another release',
      );
      expect(besideRecords(k)).toBe(before);
      expect(must(k, ['verify']).errors).toEqual([]);
    },
  );

  it(
    'refuses a RETIRED target, a target outside the runnable set, a target that does ' +
      'not verify, and a blank rationale: each recorded with its failed condition',
    () => {
      const cases: Array<[string, (k: string) => void, string[], string[]]> = [
        [
          'retired',
          (k) => must(k, ['release', 'transition', 'v1', '--to', 'RETIRED', '--rationale', 'gone']),
          ['--rationale', 'r'],
          ['TARGET_NOT_RETIRED'],
        ],
        [
          'not runnable',
          (k) => must(k, ['release', 'runnable', 'v2', '--rationale', 'only v2 ships']),
          ['--rationale', 'r'],
          ['TARGET_RUNNABLE'],
        ],
        [
          'does not verify',
          (k) => {
            // The target's manifest edited by hand: a tampered descriptor is an integrity error (exit 8) before any
            // condition.
            const file = path.join(k, `demo/context_bundles/bundles/${t.baseline}.json`);
            fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Be helpful.', 'Be helpless.'));
          },
          ['--rationale', 'r'],
          ['TARGET_VERIFIES'],
        ],
        ['blank rationale', () => {}, ['--rationale', '   '], ['RATIONALE_GIVEN']],
      ];
      for (const [label, prepare, args, codes] of cases) {
        const k = copy(template, label.replace(/ /g, '-'));
        prepare(k);
        const before = besideRecords(k);
        const r = cli(k, ['rollback', ...args]);
        expect([label, r.status, r.json.status, failed(r.json)]).toEqual([label, 3, 'refused', codes]);
        expect(besideRecords(k)).toBe(before);
        expect(activeOf(k).bundle_digest).toBe(a);
      }
    },
  );

  it(
    '--expect-active: a bundle that is not active is exit 6 with ' +
      'nothing written; a re-run after the rollback reports it',
    () => {
      const k = copy(template, 'expect');
      const before = treeHash(k);
      expect(cli(k, ['rollback', '--rationale', 'x', '--expect-active', t.baseline]).json.error.code).toBe(
        'ACTIVE_MOVED',
      );
      expect(treeHash(k)).toBe(before);
      const first = must(k, ['rollback', '--rationale', 'x', '--expect-active', a]);
      const after = treeHash(k);
      const again = must(k, ['rollback', '--rationale', 'x', '--expect-active', a.slice(0, 12)]);
      expect(again).toMatchObject({already_done: true, execution_key: first.execution_key});
      expect(treeHash(k)).toBe(after);
    },
  );
});

describe('emergency rollback and the second approver', () => {
  it(
    'executes at once and awaits approval; the executor, a second approval ' +
      'and an ordinary rollback are refused (exit 3, nothing written)',
    () => {
      const k = copy(template, 'emergency');
      const r = must(k, ['rollback', '--emergency', '--rationale', 'citations gone', '--actor', 'alice']);
      expect(r).toMatchObject({
        status: 'rolled_back',
        execution_status: 'AWAITING_APPROVAL',
        emergency: true,
        bundle_digest: t.baseline,
      });
      expect(activeOf(k).bundle_digest).toBe(t.baseline);
      const key = r.execution_key;
      expect(
        must(k, ['status']).scenarios[0].rollbacks.map((v: {execution_key: string; status: string}) => [
          v.execution_key,
          v.status,
        ]),
      ).toEqual([[key, 'AWAITING_APPROVAL']]);
      let before = treeHash(k);
      const self = cli(k, ['rollback', 'approve', key, '--actor', 'alice']);
      expect([self.status, self.json.error.code]).toEqual([3, 'APPROVER_MUST_DIFFER']);
      expect(treeHash(k)).toBe(before);
      const ok = must(k, ['rollback', 'approve', key, '--actor', 'bob']);
      expect(resultSchemaProblem('result-rollback-approve', ok)).toBeNull();
      const bytes = fs.readFileSync(path.join(k, ROLLBACKS, `${key}.json`));
      expect(ok).toMatchObject({
        status: 'approved',
        approved_by: 'bob',
        execution_sha256: createHash('sha256').update(bytes).digest('hex'),
      });
      expect(must(k, ['rollback', 'show', key]).view).toMatchObject({status: 'APPROVED', approved_by: 'bob'});
      expect(must(k, ['status']).scenarios[0].rollbacks).toEqual([]);
      before = treeHash(k);
      const twice = cli(k, ['rollback', 'approve', key, '--actor', 'carol']);
      expect([twice.status, twice.json.error.code]).toEqual([3, 'ALREADY_APPROVED']);
      expect(treeHash(k)).toBe(before);
      const ordinary = must(k, ['rollback', '--rationale', 'undo', '--actor', 'carol']);
      const none = cli(k, ['rollback', 'approve', ordinary.execution_key, '--actor', 'bob']);
      expect([none.status, none.json.error.code]).toEqual([3, 'NOT_AWAITING_APPROVAL']);
      expect(must(k, ['verify']).errors).toEqual([]);
    },
  );

  it('of 8 concurrent approvals by different principals exactly one is written', async () => {
    const k = copy(template, 'concurrent');
    const key = must(k, ['rollback', '--emergency', '--rationale', 'stop', '--actor', 'alice']).execution_key;
    const bin = path.join(PROJECT_ROOT, 'bin/run.js');
    const runs = await Promise.all(
      Array.from(
        {length: 8},
        (_, i) =>
          new Promise<{code: number | null; out: string}>((resolve) => {
            const child = spawn(
              process.execPath,
              [bin, 'rollback', 'approve', key, '--actor', `approver-${i}`, '--knowledge', k, '--json'],
              {stdio: ['ignore', 'pipe', 'ignore']},
            );
            let out = '';
            child.stdout.on('data', (d) => (out += d));
            child.on('close', (code) => resolve({code, out}));
          }),
      ),
    );
    expect(runs.map((r) => r.code).sort()).toEqual([0, 3, 3, 3, 3, 3, 3, 3]);
    expect(runs.filter((r) => r.code === 3).every((r) => JSON.parse(r.out).error.code === 'ALREADY_APPROVED')).toBe(
      true,
    );
    expect(fs.readdirSync(path.join(k, ROLLBACKS, 'approvals'))).toEqual([`${key}.json`]);
  });

  it(
    'expires unapproved after the window (injected clock): ' + 'approve is refused, show, status and verify flag it',
    async () => {
      const k = copy(template, 'expiry');
      // After every move the template recorded (at the real time it was built), whatever the date the suite runs on.
      const t0 = new Date(Date.now() + 60_000);
      const r = await rollback({knowledge: k, rationale: 'stop', emergency: true, actor: 'alice', now: () => t0});
      const at = (days: number) => () => new Date(t0.getTime() + days * DAY);
      expect(rollbackShow({knowledge: k, key: r.execution_key, now: at(6.9)}).view.status).toBe('AWAITING_APPROVAL');
      expect(rollbackShow({knowledge: k, key: r.execution_key, now: at(7.01)}).view.status).toBe('EXPIRED_UNAPPROVED');
      expect(status({knowledge: k, now: at(8)}).scenarios[0]!.rollbacks.map((v) => v.status)).toEqual([
        'EXPIRED_UNAPPROVED',
      ]);
      expect(verify({knowledge: k, now: at(8)}).warnings.map((w) => w.code)).toContain('EXPIRED_UNAPPROVED');
      expect(verify({knowledge: k, now: at(1)}).warnings.map((w) => w.code)).not.toContain('EXPIRED_UNAPPROVED');
      const before = treeHash(k);
      await expect(
        rollbackApprove({knowledge: k, key: r.execution_key, actor: 'bob', now: at(8)}),
      ).rejects.toMatchObject({code: 'APPROVAL_EXPIRED', exitCode: 3});
      expect(treeHash(k)).toBe(before);
      // A team's shorter window (autoctx.config.json) applies to reads and approvals alike.
      fs.writeFileSync(
        path.join(k, 'autoctx.config.json'),
        JSON.stringify({schema_version: 1, rollback: {approval_window_days: 1}}),
      );
      expect(rollbackShow({knowledge: k, key: r.execution_key, now: at(2)}).view.status).toBe('EXPIRED_UNAPPROVED');
      fs.writeFileSync(
        path.join(k, 'autoctx.config.json'),
        JSON.stringify({schema_version: 1, rollback: {approval_window_days: 30}}),
      );
      await expect(
        rollbackApprove({knowledge: k, key: r.execution_key, actor: 'bob', now: at(8)}),
      ).resolves.toMatchObject({status: 'approved'});
    },
  );

  it(
    "an approver whose clock is behind the executor's (3 s, a day) or ahead: the approval stands for " +
      'every reader, with a CLOCK_SKEW note, and a second approve is ALREADY_APPROVED (injected clocks)',
    async () => {
      // After every move the template recorded (at the real time it was built), whatever the date the suite runs on.
      const t0 = new Date(Date.now() + 60_000);
      const iso = (d: Date) => d.toISOString().replace('Z', '000+00:00');
      for (const [label, skewMs] of [
        ['3 s behind', -3000],
        ['a day behind', -DAY],
        ['8 days ahead', 8 * DAY],
      ] as const) {
        const k = copy(template, `skew-${label.replace(/ /g, '-')}`);
        const r = await rollback({knowledge: k, rationale: 'stop', emergency: true, actor: 'alice', now: () => t0});
        const approverClock = new Date(t0.getTime() + skewMs);
        // A clock a week ahead is refused at approval by that clock (the window is the approver's to check), but a
        // clock
        // behind is not.
        if (skewMs > 0) {
          await expect(
            rollbackApprove({knowledge: k, key: r.execution_key, actor: 'bob', now: () => approverClock}),
          ).rejects.toMatchObject({code: 'APPROVAL_EXPIRED'});
          const approvalFile = path.join(k, ROLLBACKS, 'approvals', `${r.execution_key}.json`);
          fs.mkdirSync(path.dirname(approvalFile), {recursive: true});
          const sha = createHash('sha256')
            .update(fs.readFileSync(path.join(k, ROLLBACKS, `${r.execution_key}.json`)))
            .digest('hex');
          fs.writeFileSync(
            approvalFile,
            JSON.stringify({
              schema_version: 1,
              execution_key: r.execution_key,
              execution_sha256: sha,
              approved_by: 'bob',
              approved_at: iso(approverClock),
            }),
          );
        } else {
          expect(
            await rollbackApprove({knowledge: k, key: r.execution_key, actor: 'bob', now: () => approverClock}),
          ).toMatchObject({status: 'approved', approved_at: iso(approverClock)});
        }
        const later = () => new Date(t0.getTime() + 1000);
        const v = verify({knowledge: k, now: later});
        expect([label, v.status, v.errors, v.notes.map((n) => `${n.code} ${path.basename(n.file)}`)]).toEqual([
          label,
          'ok',
          [],
          [`CLOCK_SKEW ${r.execution_key}.json`],
        ]);
        expect([label, rollbackShow({knowledge: k, key: r.execution_key, now: later}).view.status]).toEqual([
          label,
          'APPROVED',
        ]);
        expect([label, rollbackList({knowledge: k, now: later}).executions.map((e) => e.status)]).toEqual([
          label,
          ['APPROVED'],
        ]);
        expect([label, status({knowledge: k, now: later}).scenarios[0]!.rollbacks]).toEqual([label, []]);
        for (const args of [['verify'], ['status'], ['rollback', 'list'], ['rollback', 'show', r.execution_key]])
          expect([label, args.join(' '), cli(k, args).status]).toEqual([label, args.join(' '), 0]);
        const again = cli(k, ['rollback', 'approve', r.execution_key, '--actor', 'carol']);
        expect([label, again.status, again.json.error.code]).toEqual([label, 3, 'ALREADY_APPROVED']);
      }
    },
  );

  it(
    'an approval written by hand is caught by verify: a self-approval, one bound ' +
      'to other bytes, a record edited after approval, one without its record',
    () => {
      const k = copy(template, 'forged');
      const key = must(k, ['rollback', '--emergency', '--rationale', 'stop', '--actor', 'alice']).execution_key;
      const recordFile = path.join(k, ROLLBACKS, `${key}.json`);
      const sha = createHash('sha256').update(fs.readFileSync(recordFile)).digest('hex');
      const approvalFile = path.join(k, ROLLBACKS, 'approvals', `${key}.json`);
      fs.mkdirSync(path.dirname(approvalFile), {recursive: true});
      const approval = {
        schema_version: 1,
        execution_key: key,
        execution_sha256: sha,
        approved_by: 'bob',
        approved_at: new Date().toISOString().replace('Z', '000+00:00'),
      };
      const cases: Array<[string, object]> = [
        ['self-approval', {...approval, approved_by: 'alice'}],
        ['other bytes', {...approval, execution_sha256: '0'.repeat(64)}],
      ];
      for (const [label, forged] of cases) {
        fs.writeFileSync(approvalFile, JSON.stringify(forged));
        const v = verify({knowledge: k});
        expect([label, v.errors.map((e) => `${e.code} ${path.basename(e.file)}`)]).toEqual([
          label,
          [`APPROVAL_MISMATCH ${key}.json`],
        ]);
        expect([label, cli(k, ['rollback', 'show', key]).status]).toEqual([label, 8]);
      }
      fs.writeFileSync(approvalFile, JSON.stringify(approval));
      expect(verify({knowledge: k}).errors).toEqual([]);
      // The approved record edited afterwards (its rationale): the approval no longer binds it.
      const record = JSON.parse(fs.readFileSync(recordFile, 'utf8'));
      fs.writeFileSync(recordFile, `${JSON.stringify({...record, rationale: 'something else'}, null, 2)}\n`);
      expect(verify({knowledge: k}).errors.map((e) => e.code)).toContain('APPROVAL_MISMATCH');
      // An approval of an execution that does not exist.
      const orphan = path.join(k, ROLLBACKS, 'approvals', 'RBX-20260101000000-0123abcd.json');
      fs.writeFileSync(orphan, JSON.stringify({...approval, execution_key: 'RBX-20260101000000-0123abcd'}));
      expect(verify({knowledge: k}).errors.map((e) => `${e.code} ${path.basename(e.file)}`)).toContain(
        'APPROVAL_MISMATCH RBX-20260101000000-0123abcd.json',
      );
    },
  );
});

describe('rollback in another scope', () => {
  it('FROM_IS_ACTIVE fails in a scope without an ACTIVE of its own', () => {
    const k = copy(template, 'no-own');
    const r = cli(k, ['rollback', '--scope', 'us', '--rationale', 'r']);
    expect([r.status, failed(r.json)[0]]).toEqual([3, 'FROM_IS_ACTIVE']);
  });

  it(
    'restores the release the ACTIVE replaced through a rollback ' +
      'receipt; with --to, the one its descriptor declares for the scope',
    () => {
      const k = copy(scoped, 'eu');
      for (const to of ['SHADOW', 'CANARY', 'ACTIVE'])
        must(k, ['release', 'transition', 'v3', '--to', to, '--scope', 'eu', '--rationale', `v3 ${to}`]);
      expect([stateOf(k, 'v2', 'eu'), stateOf(k, 'v3', 'eu')]).toEqual(['DEPRECATED', 'ACTIVE']);
      const globalBefore = fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8');
      const r = must(k, ['rollback', '--scope', 'EU', '--rationale', 'v3 misroutes']);
      expect(r).toMatchObject({
        status: 'rolled_back',
        scope: 'eu',
        from_version: 'v3',
        to_version: 'v2',
        execution_status: 'EXECUTED',
      });
      expect([stateOf(k, 'v2', 'eu'), stateOf(k, 'v3', 'eu')]).toEqual(['ACTIVE', 'DEPRECATED']);
      expect(fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8')).toBe(globalBefore);
      const receipt = must(k, ['release', 'history', '--scope', 'eu']).receipts.at(-1);
      expect(receipt).toMatchObject({
        action: 'rollback',
        execution_key: r.execution_key,
        version: 'v2',
        target_state: 'ACTIVE',
        deprecated_versions: ['v3'],
        applied: true,
      });
      expect(must(k, ['route', '--scope', 'eu', '--user', 'u1']).version).toBe('v2');
      expect(must(k, ['verify']).errors).toEqual([]);
      // The record is bound by the receipt that carried it out: deleting it is an error naming it; editing it, too.
      const file = path.join(k, ROLLBACKS, `${r.execution_key}.json`);
      const gone = copy(k, 'eu-deleted');
      fs.rmSync(path.join(gone, ROLLBACKS, `${r.execution_key}.json`));
      expect(verify({knowledge: gone}).errors.map((e) => `${e.code} ${path.basename(e.file)}`)).toEqual([
        `MISSING_ROLLBACK_RECORD ${r.execution_key}.json`,
      ]);
      const edited = copy(k, 'eu-edited');
      const record = JSON.parse(fs.readFileSync(file, 'utf8'));
      fs.writeFileSync(
        path.join(edited, ROLLBACKS, `${r.execution_key}.json`),
        JSON.stringify({...record, registry_before: '0'.repeat(64)}),
      );
      expect(verify({knowledge: edited}).errors.map((e) => e.code)).toEqual(['RECEIPT_MISMATCH']);
      // Back again with --to: v2 declares v1 for the global scope only, so --to v1 is refused in eu.
      const to = cli(k, ['rollback', '--scope', 'eu', '--to', 'v1', '--rationale', 'r']);
      expect([to.status, failed(to.json)]).toEqual([3, ['TARGET_DECLARED', 'TARGET_SERVED']]);
    },
  );

  it(
    'a rejected target is refused: TARGET_NOT_REJECTED fails (exit 3), the ' +
      'record is all it writes, and the scope keeps serving what it served',
    () => {
      const k = copy(scoped, 'eu-rejected');
      for (const to of ['SHADOW', 'CANARY', 'ACTIVE'])
        must(k, ['release', 'transition', 'v3', '--to', to, '--scope', 'eu', '--rationale', `v3 ${to}`]);
      // v2 served in eu and no longer serves anywhere: it may be rejected.
      must(k, ['reject', a, '--rationale', 'it leaks']);
      const before = besideRecords(k);
      const r = cli(k, ['rollback', '--scope', 'eu', '--rationale', 'v3 misroutes']);
      expect([r.status, r.json.status, failed(r.json)]).toEqual([3, 'refused', ['TARGET_NOT_REJECTED']]);
      expect(r.json.conditions.find((c: {code: string}) => c.code === 'TARGET_NOT_REJECTED').detail).toContain(
        `candidate ${a} is rejected`,
      );
      expect(besideRecords(k)).toBe(before);
      expect([stateOf(k, 'v2', 'eu'), stateOf(k, 'v3', 'eu')]).toEqual(['DEPRECATED', 'ACTIVE']);
      expect(
        JSON.parse(fs.readFileSync(path.join(k, ROLLBACKS, `${r.json.execution_key}.json`), 'utf8')).conditions,
      ).toEqual(r.json.conditions);
      expect(must(k, ['verify']).errors).toEqual([]);
    },
  );
});

describe('rollback to a rejected bundle in the global scope', () => {
  it(
    'a target with a negative result is ' + 'refused: TARGET_NOT_REJECTED fails ' + '(exit 3) and active.json stays',
    async () => {
      const k = copy(template, 'global-rejected');
      // However it came there (a rejection of a superseded bundle is refused by reject), a negative result makes the
      // target rejected.
      const {openScenario} = await import('../../src/core/common/store-options.js');
      const {negativeResultFor} = await import('../../src/core/promotion/negative.js');
      const {requireBundle} = await import('../../src/store/kinds/bundle/bundle.js');
      const {readRecord} = await import('../../src/store/kinds/promotion/candidate-record.js');
      const {writeNegativeResult} = await import('../../src/store/kinds/promotion/negative-result.js');
      const store = openScenario({knowledge: k});
      await store.withLock(5, () => {
        const n = negativeResultFor(
          store,
          requireBundle(store, t.baseline),
          readRecord(store, t.baseline)!,
          'rejected',
          'rejected by hand: it leaks',
          {},
        );
        writeNegativeResult(store, t.baseline, n.document);
      });
      const before = besideRecords(k);
      const r = cli(k, ['rollback', '--rationale', 'back']);
      expect([r.status, r.json.status, failed(r.json)]).toEqual([3, 'refused', ['TARGET_NOT_REJECTED']]);
      expect(besideRecords(k)).toBe(before);
      expect(activeOf(k).bundle_digest).toBe(a);
    },
  );
});
