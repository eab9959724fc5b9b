import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {prettyJson} from '../../src/canonical/index.js';
import {planBindingDigest, boundPlanFrom} from '../../src/model/evaluation/evaluator-plan.js';
import {createMatchedTrial, evidenceSeal, sortEvidence, type MatchedTrial} from '../../src/model/evaluation/trial.js';
import {evaluateMatchedTrials} from '../../src/model/evaluation/comparison.js';
import {createBundle} from '../../src/model/bundle/bundle.js';
import {executionKey} from '../../src/model/rollback/rollback-execution.js';
import {evalArgs, fakeEnv, makeTree, useTrees, type Tree} from '../helpers/pipeline.js';
import {copySampleKnowledge, treeHash} from '../helpers/tree.js';
import {runCli} from '../helpers/cli.js';

// Every inconsistent state is an error. B is a better candidate, W a worse one.
const tree = useTrees();
const B = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const W = {'playbook/playbook.md': 'Be vague.\n', 'routing_config/roles.json': '{"model_competitor": "small"}'};
const worse = (t: Tree) => fakeEnv(t.dir, {FAKE_DELTA: '-0.3'});

type Issue = {code: string; file: string; message: string};
const verifyOf = (t: Tree) => {
  const r = t.cli(['verify']);
  const pick = (xs: Issue[]) => xs.map((e) => `${e.code} ${path.basename(e.file)}`).sort();
  return {
    status: r.status,
    errors: pick(r.json.errors),
    warnings: pick(r.json.warnings),
    notes: pick(r.json.notes ?? []),
    messages: (r.json.errors as Issue[]).map((e) => e.message).join('\n'),
  };
};
const json = (t: Tree, rel: string) => JSON.parse(t.read(rel));
const write = (t: Tree, rel: string, value: unknown) => fs.writeFileSync(t.file(rel), prettyJson(value));

function confirmed(t: Tree, name = 'b', files: Record<string, string> = B): string {
  const c = t.propose(name, files);
  expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('confirmed');
  return c;
}
function rejected(t: Tree, name = 'w'): string {
  const c = t.propose(name, {...W, 'hints/hints.md': `${name}\n`});
  expect(t.cli(['confirm', c, ...evalArgs()], worse(t)).json.status).toBe('rejected');
  return c;
}

/** Setup built once for the file (`build` on a fresh tree), then copied for each test that starts from it. */
const templates: string[] = [];
afterAll(() => templates.forEach((d) => fs.rmSync(d, {recursive: true, force: true})));
function startingFrom<T>(build: (t: Tree) => T): () => T & {t: Tree} {
  let made: {t: Tree; value: T} | undefined;
  return () => {
    if (!made) {
      const t = makeTree();
      templates.push(t.dir);
      made = {t, value: build(t)};
    }
    return {...made.value, t: tree(made.t)};
  };
}
/** A tree with B confirmed. */
const withB = startingFrom((t) => ({b: confirmed(t)}));
/** A tree with B confirmed, then W rejected. */
const withBW = startingFrom((t) => {
  const b = confirmed(t);
  return {b, w: rejected(t)};
});

describe('§1 evidence bound to its plan: the stopping rule', () => {
  it(
    'a planned unit appended after the decision stopped asking for its ' +
      'lane, resealed and replayed consistently, is not what a run records',
    () => {
      const t = tree();
      const w = rejected(t);
      const evidence = json(t, `candidates/${w}/matched_trials.json`);
      const plan = boundPlanFrom(json(t, `candidates/${w}/evaluator_plan.json`));
      const recorded = new Set((evidence.trials as MatchedTrial[]).map((x) => `${x.fixture_digest}|${x.seed}`));
      // Rejected at the screen: the decision asks for no lane any more; the first confirmation unit is appended.
      const next = plan.plan.units.find(
        (u) => u.lane === 'confirmation' && !recorded.has(`${u.fixture_digest}|${u.seed}`),
      )!;
      expect(next).toBeDefined();
      const first = evidence.trials[0] as MatchedTrial;
      const extra = createMatchedTrial({
        ...first,
        fixture: next.fixture,
        fixture_digest: next.fixture_digest,
        seed: next.seed,
        lane: 'confirmation',
      });
      const trials = sortEvidence([...evidence.trials.map((x: MatchedTrial) => createMatchedTrial(x)), extra]);
      // A consistent forgery: the evidence, a recomputed seal, and a record that replays from both.
      write(t, `candidates/${w}/matched_trials.json`, {...evidence, trials});
      write(t, `candidates/${w}/evidence_seal.json`, evidenceSeal(w, trials, planBindingDigest(plan)));
      const record = json(t, `candidates/${w}/record.json`);
      const bundle = json(t, `bundles/${w}.json`);
      const comparison = evaluateMatchedTrials(
        {digest: w, parent_digest: bundle.parent_digest, evaluator_epoch: bundle.evaluator_epoch},
        trials,
        evidence.confirmation_policy,
      );
      write(t, `candidates/${w}/record.json`, {...record, comparison, rationale: comparison.reason});
      const v = verifyOf(t);
      expect(v.status).toBe(8);
      expect(v.errors).toEqual(
        expect.arrayContaining(['TRIAL_NOT_PLANNED matched_trials.json', 'TRIAL_NOT_PLANNED evaluator_plan.json']),
      );
      expect(v.messages).toMatch(/stopped asking for confirmation pairs/);
      const replay = t.cli(['replay', w]);
      expect([replay.status, replay.json.error.code]).toEqual([8, 'INTEGRITY']);
      const before = treeHash(t.knowledge);
      expect(t.cli(['repair']).json.remaining).toEqual(
        expect.arrayContaining([expect.stringMatching(/stopped asking for confirmation pairs; left as it is/)]),
      );
      expect(treeHash(t.knowledge)).toBe(before);
    },
  );
});

describe('§1 a decided record has every file it was decided from', () => {
  it(
    'a confirmed candidate that lost its seal: MISSING_SEAL ' +
      'naming both files; promote refuses; repair fills nothing in',
    () => {
      const {t, b} = withB();
      fs.rmSync(t.file(`candidates/${b}/evidence_seal.json`));
      const v = verifyOf(t);
      expect([v.status, v.errors]).toEqual([8, ['MISSING_SEAL evidence_seal.json', 'MISSING_SEAL record.json']]);
      const before = treeHash(t.knowledge);
      expect(t.cli(['repair']).json.remaining).toEqual([
        expect.stringContaining('evidence_seal.json, the seal of the trials it was decided from, is missing'),
      ]);
      const promote = t.cli(['promote', b]);
      expect([promote.status, promote.json.error.code]).toEqual([8, 'INTEGRITY']);
      expect(treeHash(t.knowledge)).toBe(before);
    },
  );

  it(
    "the active candidate's whole folder deleted, and a rejected " +
      "candidate's folder with its ledger copy: MISSING_CANDIDATE",
    () => {
      const {t, b, w} = withBW();
      expect(t.cli(['promote', b]).json.status).toBe('promoted');
      fs.rmSync(t.file(`candidates/${b}`), {recursive: true});
      fs.rmSync(t.file(`candidates/${w}`), {recursive: true});
      fs.rmSync(path.join(t.knowledge, `demo/negative_result_ledgers/context-bundle-${w}.json`));
      const v = verifyOf(t);
      expect(v.status).toBe(8);
      expect(v.errors).toEqual(expect.arrayContaining([`MISSING_CANDIDATE ${b}.json`, `MISSING_CANDIDATE ${w}.json`]));
    },
  );

  it('each decided file deleted alone is named: plan, evidence, diff, record', () => {
    for (const [file, code] of [
      ['evaluator_plan.json', 'MISSING_PLAN'],
      ['matched_trials.json', 'MISSING_EVIDENCE'],
      ['manifest_diff.json', 'MISSING_DIFF'],
      ['record.json', 'MISSING_CANDIDATE'],
    ] as const) {
      const {t, b} = withB();
      fs.rmSync(t.file(`candidates/${b}/${file}`));
      const v = verifyOf(t);
      expect([file, v.status, v.errors]).toEqual([file, 8, expect.arrayContaining([`${code} ${file}`])]);
    }
  });

  it(
    "Ctrl-C after the first pair's evidence, before any seal: a " + 'warning (not silence) that the next run completes',
    () => {
      const t = tree();
      const c = t.propose('b', B);
      const trace = path.join(t.dir, 'trace');
      const u = tree();
      const d = u.propose('b', B);
      t.cli(['confirm', c, ...evalArgs()], {...fakeEnv(t.dir), AUTOCTX_FAULT_TRACE: trace});
      const point = fs
        .readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '))
        .find(([p, f]) => p!.endsWith(':after') && f === 'matched_trials.json')![0]!;
      expect(u.cli(['confirm', d, ...evalArgs()], {...fakeEnv(u.dir), AUTOCTX_FAULT: point}).status).toBe(null);
      expect(fs.existsSync(u.file(`candidates/${d}/evidence_seal.json`))).toBe(false);
      const v = verifyOf(u);
      expect([v.status, v.errors, v.warnings]).toEqual([
        0,
        [],
        expect.arrayContaining(['UNSEALED_TRIALS evidence_seal.json']),
      ]);
      expect(u.cli(['confirm', d, ...evalArgs()], fakeEnv(u.dir)).json.status).toBe('confirmed');
      expect(verifyOf(u)).toMatchObject({status: 0, errors: [], warnings: []});
    },
  );
});

describe('§1 trees written by the Python implementation', () => {
  it(
    "candidates without a seal whose plan has exactly upstream's " +
      'shape verify, each noted as checked by replay alone',
    () => {
      const knowledge = copySampleKnowledge();
      const r = runCli(['verify', '--knowledge', knowledge, '--json']);
      expect(r.status).toBe(0);
      expect(r.json.errors).toEqual([]);
      expect(r.json.notes.map((n: Issue) => n.code)).toEqual(['REPLAY_ONLY', 'REPLAY_ONLY']);
      const before = treeHash(knowledge);
      runCli(['repair', '--knowledge', knowledge, '--json']);
      expect(treeHash(knowledge)).toBe(before); // never a seal, nor anything else
      fs.rmSync(path.dirname(knowledge), {recursive: true, force: true});
    },
  );

  /**
   * The sample tree, with active.json and the lifecycles moved as the Python implementation's own rollback or rollover
   * leaves them.
   */
  function upstreamMove(kind: 'rollback' | 'rollover'): string {
    const knowledge = copySampleKnowledge();
    const dir = path.join(knowledge, 'demo/context_bundles');
    const read = (rel: string) => JSON.parse(fs.readFileSync(path.join(dir, rel), 'utf8'));
    const put = (rel: string, v: unknown) => {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), {recursive: true});
      fs.writeFileSync(path.join(dir, rel), JSON.stringify(v));
    };
    const promoted = '6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252';
    const baseline = '9fe14ef551d9ecddd152d0826d2e636e63613b62684ce950f45f8e7a936b71bb';
    const now = '2026-11-30T08:00:00.000000+00:00';
    put(`candidates/${promoted}/record.json`, {
      ...read(`candidates/${promoted}/record.json`),
      lifecycle: 'superseded',
      updated_at: now,
    });
    if (kind === 'rollback') {
      put('active.json', {
        schema_version: 1,
        bundle_digest: baseline,
        evaluator_epoch: 'epoch-1',
        promotion_id: null,
        rollback_target_digest: promoted,
        activated_at: now,
        rationale: 'rollback: regression',
      });
      put(`candidates/${baseline}/record.json`, {
        ...read(`candidates/${baseline}/record.json`),
        lifecycle: 'active',
        updated_at: now,
      });
      fs.rmSync(path.join(knowledge, 'demo/playbook.md'));
    } else {
      const manifest = read(`bundles/${promoted}.json`);
      const next = createBundle({
        scenario: 'demo',
        evaluator_epoch: 'epoch-2',
        parent_digest: null,
        components: manifest.components,
      });
      put(`bundles/${next.digest}.json`, next);
      put(`candidates/${next.digest}/record.json`, {
        schema_version: 2,
        bundle_digest: next.digest,
        parent_digest: null,
        evaluator_epoch: 'epoch-2',
        lifecycle: 'active',
        source_run_id: '',
        source_generation: 0,
        created_at: now,
        updated_at: now,
        rationale: 'evaluator epoch rollover from epoch-1',
        comparison: null,
        confirmation_policy: null,
        confirmation_policy_digest: null,
      });
      put('active.json', {
        schema_version: 1,
        bundle_digest: next.digest,
        evaluator_epoch: 'epoch-2',
        promotion_id: null,
        rollback_target_digest: null,
        activated_at: now,
        rationale: 'evaluator epoch rollover from epoch-1',
      });
    }
    return knowledge;
  }

  it.each(['rollback', 'rollover'] as const)(
    "an unrecorded %s in the Python implementation's own form is accepted, " +
      'noted as written by another implementation; a hand move is not',
    (kind) => {
      const knowledge = upstreamMove(kind);
      const r = runCli(['verify', '--knowledge', knowledge, '--json']);
      expect([r.status, r.json.errors, r.json.warnings]).toEqual([0, [], []]);
      expect(r.json.notes.map((n: Issue) => n.code)).toContain('FOREIGN_POINTER_MOVE');
      // The same pointer with its rationale changed is no move of anyone's.
      const file = path.join(knowledge, 'demo/context_bundles/active.json');
      fs.writeFileSync(file, JSON.stringify({...JSON.parse(fs.readFileSync(file, 'utf8')), rationale: 'moved'}));
      expect(runCli(['verify', '--knowledge', knowledge, '--json']).json.errors.map((e: Issue) => e.code)).toContain(
        'POINTER_NOT_RECORDED',
      );
      fs.rmSync(path.dirname(knowledge), {recursive: true, force: true});
    },
  );

  it('an autoctx candidate whose plan has additions is never accepted without its seal', () => {
    const {t, b} = withB();
    expect(json(t, `candidates/${b}/evaluator_plan.json`).additions).toBeDefined();
    fs.rmSync(t.file(`candidates/${b}/evidence_seal.json`));
    expect(verifyOf(t).notes).toEqual([]);
  });
});

describe('§2 the pointer has a history', () => {
  it(
    'active.json moved by hand to a rejected bundle: ' +
      'POINTER_NOT_RECORDED; repair completes nothing; rollback refuses',
    () => {
      const t = tree();
      const w = rejected(t);
      const active = json(t, 'active.json');
      write(t, 'active.json', {...active, bundle_digest: w});
      const v = verifyOf(t);
      expect(v.status).toBe(8);
      expect(v.errors).toContain('POINTER_NOT_RECORDED active.json');
      const before = treeHash(t.knowledge);
      expect(t.cli(['repair']).json.remaining).toEqual(
        expect.arrayContaining([expect.stringContaining('is not the pointer any recorded move')]),
      );
      expect(treeHash(t.knowledge)).toBe(before);
    },
  );

  it('a hand-edited rollback_target_digest: verify names it, and autoctx rollback refuses instead of serving W', () => {
    const {t, b, w} = withBW();
    expect(t.cli(['promote', b]).json.status).toBe('promoted');
    write(t, 'active.json', {...json(t, 'active.json'), rollback_target_digest: w});
    expect(verifyOf(t).errors).toContain('POINTER_NOT_RECORDED active.json');
    const before = treeHash(t.knowledge);
    const r = t.cli(['rollback', '--rationale', 'go back']);
    expect([r.status, r.json.error.code]).toEqual([8, 'INTEGRITY']);
    expect(treeHash(t.knowledge)).toBe(before);
  });

  it('a recorded rollback whose target never served before is ROLLBACK_NOT_SERVED', () => {
    const {t, b, w} = withBW();
    expect(t.cli(['promote', b]).json.status).toBe('promoted');
    expect(t.cli(['rollback', '--rationale', 'back']).status).toBe(0);
    // Rewrite the rollback record and the pointer consistently, to restore W instead of the baseline.
    const dir = t.file('rollbacks');
    const [file] = fs.readdirSync(dir);
    const rb = JSON.parse(fs.readFileSync(path.join(dir, file!), 'utf8'));
    const id = executionKey({...rb, to_digest: w});
    fs.rmSync(path.join(dir, file!));
    write(t, `rollbacks/${id}.json`, {...rb, execution_key: id, to_digest: w});
    write(t, 'active.json', {...json(t, 'active.json'), bundle_digest: w});
    const v = verifyOf(t);
    expect(v.status).toBe(8);
    expect(v.errors).toEqual(
      expect.arrayContaining([`ROLLBACK_NOT_SERVED ${id}.json`, 'ROLLBACK_NOT_SERVED active.json']),
    );
  });

  it('an epoch rollover has a record of its own that log shows; deleting it breaks the history', () => {
    const t = tree();
    expect(t.cli(['epoch', 'rollover', '--evaluator-epoch', 'epoch-2']).json.status).toBe('rolled_over');
    expect(
      t
        .cli(['log'])
        .json.entries.filter((e: {served?: string}) => e.served !== undefined)
        .map((e: {type: string; served: string}) => [e.type, e.served]),
    ).toEqual([['rollover', 'serving']]);
    expect(verifyOf(t)).toMatchObject({status: 0, errors: []});
    const [file] = fs.readdirSync(t.file('rollovers'));
    fs.rmSync(t.file(`rollovers/${file}`));
    expect(verifyOf(t).errors).toContain('POINTER_NOT_RECORDED active.json');
  });

  it(
    'a promotion record whose move never served (a crash after the ' +
      "record, then a sibling's promotion) is marked by verify and log",
    () => {
      const t = tree();
      const b1 = confirmed(t, 'b1', B);
      const b2 = confirmed(t, 'b2', {...B, 'hints/hints.md': 'two\n'});
      const trace = path.join(t.dir, 'promote-trace');
      const probe = tree();
      const p1 = confirmed(probe, 'b1', B);
      probe.cli(['promote', p1], {AUTOCTX_FAULT_TRACE: trace});
      const point = fs
        .readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '))
        .find(([p, f]) => p!.endsWith(':after') && /^[0-9a-f]{32}\.json$/.test(f!))![0]!;
      expect(t.cli(['promote', b1], {AUTOCTX_FAULT: point}).status).toBe(null);
      expect(verifyOf(t).warnings).toContain(`MOVE_PENDING ${fs.readdirSync(t.file('promotions'))[0]}`);
      expect(t.cli(['repair']).status).toBe(0);
      expect(t.cli(['promote', b2]).json.status).toBe('promoted');
      const v = verifyOf(t);
      expect([v.status, v.errors]).toEqual([0, []]);
      expect(v.warnings.filter((w) => w.startsWith('NEVER_SERVED'))).toHaveLength(1);
      const entries = (t.cli(['log']).json.entries as Array<{to_digest: string; served?: string}>).filter(
        (e) => e.served !== undefined,
      );
      expect(entries.map((e) => [e.to_digest, e.served])).toEqual(
        expect.arrayContaining([
          [b1, 'never'],
          [b2, 'serving'],
        ]),
      );
    },
  );
});

describe('§3 lifecycles agree with the files beside them', () => {
  it('a record edited from rejected to screened is LIFECYCLE_MISMATCH', () => {
    const t = tree();
    const w = rejected(t);
    write(t, `candidates/${w}/record.json`, {...json(t, `candidates/${w}/record.json`), lifecycle: 'screened'});
    expect(verifyOf(t).errors).toContain('LIFECYCLE_MISMATCH record.json');
  });

  it(
    'a negative result edited consistently in both copies, or ' +
      'copied from another candidate: NEGATIVE_RESULT_MISMATCH',
    () => {
      const t = tree();
      const w1 = rejected(t, 'w1');
      const w2 = rejected(t, 'w2');
      const ledger = (d: string) => path.join(t.knowledge, `demo/negative_result_ledgers/context-bundle-${d}.json`);
      const neg = json(t, `candidates/${w1}/negative_result.json`);
      const edited = JSON.parse(
        JSON.stringify(neg).replace(
          /matched_trials\.json#sha256=[0-9a-f]{64}/,
          `matched_trials.json#sha256=${'0'.repeat(64)}`,
        ),
      );
      write(t, `candidates/${w1}/negative_result.json`, edited);
      fs.writeFileSync(ledger(w1), prettyJson(edited));
      expect(verifyOf(t).errors).toContain('NEGATIVE_RESULT_MISMATCH negative_result.json');
      // The other candidate's negative result copied into place, in both copies.
      const other = json(t, `candidates/${w2}/negative_result.json`);
      write(t, `candidates/${w1}/negative_result.json`, other);
      fs.writeFileSync(ledger(w1), prettyJson(other));
      expect(verifyOf(t).messages).toMatch(/is not this candidate's own negative result: its run_id/);
    },
  );

  it(
    'a negative result beside a confirmed record means rejected: ' +
      'a warning that repair completes, and promote refuses',
    () => {
      const t = tree();
      const b = confirmed(t);
      const w = rejected(t);
      // What a stale or campaign-blocked rejection leaves when killed between its negative result and its record.
      const neg = json(t, `candidates/${w}/negative_result.json`);
      const mine = JSON.parse(JSON.stringify(neg).replaceAll(w, b));
      expect(mine.run_id).toBe(`context-bundle:${b}`);
      write(t, `candidates/${b}/negative_result.json`, mine);
      const promote = t.cli(['promote', b]);
      expect([promote.status, promote.json.error.code]).toEqual([8, 'INTEGRITY']);
      expect(verifyOf(t).warnings).toContain('TERMINAL_PENDING record.json');
    },
  );
});
