import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {verify} from '../../src/core/common/verify.js';
import {runCli, type CliResult} from '../helpers/cli.js';
import {FAKE, FIXTURES_12, POLICY_SMALL, readUnits, trialResult} from '../helpers/pipeline.js';
import {tempDir, withoutRecordHistories, writeSource} from '../helpers/tree.js';
import {copyRolledScenario} from '../helpers/kind-trees.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {legacyPairKey} from '../../src/model/index.js';

/**
 * Crash injection: every command that writes is killed with SIGKILL before and
 * after each of its durable writes (AUTOCTX_FAULT=<n>:before|after). After each
 * crash the pointer is wholly old or new and verify reports nothing a re-run
 * cannot repair; re-running the same command reaches the result of a run that
 * was never interrupted; what temporary files the re-run did not sweep (it
 * sweeps the folders it writes into) verify names and repair removes.
 */
const root = tempDir('autoctx-crash-');
afterAll(() => fs.rmSync(root, {recursive: true, force: true}));
const covered: string[] = [];
/** The number of fault points each scenario's uninterrupted run passed. */
const traced: number[] = [];

const ENV = {FAKE_DELTA: '0.2', FAKE_NOISE: '0.05'};
const OBSERVING = path.join(PROJECT_ROOT, 'test/fixtures/evaluators/observing.js');
const base = writeSource(path.join(root, 'src-base'), {
  'playbook/playbook.md': 'Be helpful.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
});
const cand = writeSource(path.join(root, 'src-cand'), {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
});
const candHarness = writeSource(path.join(root, 'src-cand-harness'), {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
  'harness_validator/check_output.py': 'def validate(output):\n    return "error" not in output\n',
});
const evaluation = [
  '--evaluator',
  `node ${FAKE}`,
  '--evaluator-mode',
  'persistent',
  '--fixtures',
  FIXTURES_12,
  '--policy',
  POLICY_SMALL,
  '--quiet',
];

function cli(k: string, args: string[], env: NodeJS.ProcessEnv = {}): CliResult {
  return runCli([...args, '--knowledge', k, '--json'], {env: {...ENV, ...env}});
}

/** Templates, each built once: a tree in a given state. */
const templates: Record<string, string> = {};
let candidate = '';
function template(name: string, build: (k: string) => void): string {
  if (!templates[name]) {
    const k = path.join(root, `template-${name}`, 'knowledge');
    fs.mkdirSync(path.dirname(k), {recursive: true});
    build(k);
    templates[name] = k;
  }
  return templates[name];
}
const empty = () => template('empty', () => undefined);
const initialized = () =>
  template('initialized', (k) => expect(cli(k, ['init', '--scenario', 'demo', '--from', base]).status).toBe(0));
/** A tree made before autoctx wrote a .gitattributes: repair writes it. */
const withoutAttributes = () =>
  template('without-attributes', (k) => {
    fs.cpSync(initialized(), k, {recursive: true});
    fs.rmSync(path.join(k, '.gitattributes'));
  });
const proposed = () =>
  template('proposed', (k) => {
    fs.cpSync(initialized(), k, {recursive: true});
    candidate = cli(k, ['propose', '--from', cand, '--run-id', 'crash']).json.bundle_digest;
  });
const confirmed = () =>
  template('confirmed', (k) => {
    fs.cpSync(proposed(), k, {recursive: true});
    expect(cli(k, ['confirm', candidate, ...evaluation]).json.status).toBe('confirmed');
  });
const promoted = () =>
  template('promoted', (k) => {
    fs.cpSync(confirmed(), k, {recursive: true});
    expect(cli(k, ['promote', candidate]).status).toBe(0);
  });
/** Confirmed by the observing evaluator under a guardrail, so that promote records its verdict. */
const guarded = () =>
  template('guarded', (k) => {
    fs.cpSync(proposed(), k, {recursive: true});
    const observing = evaluation.map((x) => (x === `node ${FAKE}` ? `node ${OBSERVING}` : x));
    const args = ['confirm', candidate, ...observing, '--guardrail', 'median(cost_usd) <= 1.25x'];
    expect(cli(k, args).json.status).toBe('confirmed');
  });
const exported = () =>
  template('exported', (k) => {
    fs.cpSync(proposed(), k, {recursive: true});
    const units = path.join(root, 'units.jsonl');
    cli(k, [
      'plan',
      'export',
      candidate,
      '--engine',
      'crash-engine',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--out',
      units,
    ]);
    const results = readUnits(units).map((u) =>
      JSON.stringify(trialResult(u, {score: 0.7 + (u.seed % 7) / 100}, {score: 0.5})),
    );
    fs.writeFileSync(path.join(root, 'results.jsonl'), `${results.join('\n')}\n`);
  });

/** A candidate bound to a mistyped evaluator (nothing recorded): what --rebind starts from. */
const typoBound = () =>
  template('typo-bound', (k) => {
    fs.cpSync(proposed(), k, {recursive: true});
    const typo = evaluation.map((x) => (x === `node ${FAKE}` ? `nod ${FAKE}` : x));
    expect(cli(k, ['confirm', candidate, ...typo]).status).toBe(8);
  });
/**
 * A confirmed candidate whose evidence is schema-1 with no recorded policy (as an older Python implementation left it).
 */
const legacy = () =>
  template('legacy', (k) => {
    fs.cpSync(confirmed(), k, {recursive: true});
    const dir = path.join(k, 'demo/context_bundles/candidates', candidate);
    const doc = JSON.parse(fs.readFileSync(path.join(dir, 'matched_trials.json'), 'utf8'));
    fs.writeFileSync(
      path.join(dir, 'matched_trials.json'),
      JSON.stringify(doc.trials.map((t: Record<string, unknown>) => ({...t, pair_key: legacyPairKey(t as never)}))),
    );
    const record = JSON.parse(fs.readFileSync(path.join(dir, 'record.json'), 'utf8'));
    fs.writeFileSync(
      path.join(dir, 'record.json'),
      JSON.stringify({...record, confirmation_policy: null, confirmation_policy_digest: null}, null, 2),
    );
    fs.rmSync(path.join(dir, 'evidence_seal.json'));
    withoutRecordHistories(k);
  });

/**
 * A tree the Python implementation wrote whose newest pointer move is its own rollback (scenario rolled of
 * test/fixtures/upstream-rich).
 */
const pythonRolledBack = () => template('python-rolled-back', (k) => copyRolledScenario(k));
/** What rolling back from it keeps: the pointer, the foreign move (foreign_moves/) and the execution records. */
function foreignState(k: string): unknown {
  const dir = path.join(k, 'rolled/context_bundles');
  const list = (sub: string) =>
    fs.existsSync(path.join(dir, sub))
      ? fs
          .readdirSync(path.join(dir, sub))
          .filter((f) => f.endsWith('.json'))
          .sort()
      : [];
  const rbx = list('rollbacks')
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, 'rollbacks', f), 'utf8')))
    .map((r) => [r.status, r.from_digest, r.to_digest]);
  return {
    active: JSON.parse(fs.readFileSync(path.join(dir, 'active.json'), 'utf8')).bundle_digest,
    foreign: list('foreign_moves').map((f) =>
      fs.readFileSync(path.join(dir, 'foreign_moves', f), 'utf8').replace(/"adopted_at": "[^"]*"/, ''),
    ),
    rbx,
  };
}

/** The component digest of the baseline's playbook, tagged by the bootstrap scenarios. */
let playbookDigest = '';
const tagged = () =>
  template('tagged', (k) => {
    fs.cpSync(initialized(), k, {recursive: true});
    const active = JSON.parse(fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8')).bundle_digest;
    playbookDigest = cli(k, ['bundle', 'show', active]).json.manifest.components.find(
      (c: {kind: string}) => c.kind === 'playbook',
    ).digest;
    expect(cli(k, ['tag', 'add', playbookDigest]).status).toBe(0);
    const h = path.join(root, 'handoff-1.json');
    fs.writeFileSync(h, '{"summary": "first"}');
    expect(cli(k, ['handoff', 'write', '--id', 'notes', '--from', h]).status).toBe(0);
  });
const handoff2 = path.join(root, 'handoff-2.json');
fs.writeFileSync(handoff2, '{"summary": "second", "open": ["quota"]}');
const PREPARE = [
  'bootstrap',
  'prepare',
  '--integration',
  'codex',
  '--lifecycle',
  'startup',
  '--enabled',
  '--event-id',
  'crash-event',
  '--handoff',
  'notes@1',
];
let receiptId = '';
const prepared = () =>
  template('prepared', (k) => {
    fs.cpSync(tagged(), k, {recursive: true});
    receiptId = cli(k, PREPARE).json.receipt.receipt_id;
  });

/** A confirmed candidate, the baseline named v1 and the candidate v2 (DRAFT); and v2 as a CANARY. */
const released = () =>
  template('released', (k) => {
    fs.cpSync(confirmed(), k, {recursive: true});
    const active = JSON.parse(fs.readFileSync(path.join(k, 'demo/context_bundles/active.json'), 'utf8')).bundle_digest;
    expect(cli(k, ['release', 'name', 'v1', active]).status).toBe(0);
    expect(cli(k, ['release', 'name', 'v2', candidate, '--rollback-target', 'v1']).status).toBe(0);
  });
const canaried = () =>
  template('canaried', (k) => {
    fs.cpSync(released(), k, {recursive: true});
    expect(cli(k, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 'shadow']).status).toBe(0);
    expect(cli(k, ['release', 'transition', 'v2', '--to', 'CANARY', '--rationale', 'canary']).status).toBe(0);
  });

/** An emergency rollback of the promoted candidate by alice, awaiting its second approver. */
let executionKey = '';
const emergency = () =>
  template('emergency', (k) => {
    fs.cpSync(promoted(), k, {recursive: true});
    executionKey = cli(k, ['rollback', '--emergency', '--rationale', 'stop', '--actor', 'alice']).json.execution_key;
  });

/** Scope eu: v2 ACTIVE there, then v3 (a second confirmed candidate) ACTIVE in its place. */
const cand3 = writeSource(path.join(root, 'src-cand3'), {
  'playbook/playbook.md': 'Be helpful, precise and kind.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
});
let thirdDigest = '';
const scopedTwo = () =>
  template('scoped-two', (k) => {
    fs.cpSync(released(), k, {recursive: true});
    const third = cli(k, ['propose', '--from', cand3, '--run-id', 'third']).json.bundle_digest;
    expect(cli(k, ['confirm', third, ...evaluation], {FAKE_DELTA: '0.5', FAKE_NOISE: '0.01'}).json.status).toBe(
      'confirmed',
    );
    expect(cli(k, ['release', 'name', 'v3', third]).status).toBe(0);
    thirdDigest = third;
    for (const v of ['v2', 'v3'])
      for (const to of ['SHADOW', 'CANARY', 'ACTIVE'])
        expect(
          cli(k, ['release', 'transition', v, '--to', to, '--scope', 'eu', '--rationale', `${v} ${to}`]).status,
        ).toBe(0);
  });

/** Keys for the signed scenarios: alice signs, bob approves. */
function keygen(name: string): string {
  const file = path.join(root, `key-${name}`);
  if (!fs.existsSync(file)) {
    const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file], {encoding: 'utf8'});
    if (r.status !== 0) throw new Error(r.stderr);
  }
  return file;
}
const signers = () => {
  const file = path.join(root, 'allowed_signers');
  if (!fs.existsSync(file)) {
    const pub = (n: string) =>
      fs
        .readFileSync(`${keygen(n)}.pub`, 'utf8')
        .trim()
        .split(' ')
        .slice(0, 2)
        .join(' ');
    fs.writeFileSync(
      file,
      `alice@x namespaces="autoctx" ${pub('alice')}\nbob@x namespaces="autoctx,autoctx-approver" ${pub('bob')}\n`,
    );
  }
  return file;
};
const signersNext = () => {
  const file = path.join(root, 'allowed_signers.next');
  if (!fs.existsSync(file))
    fs.writeFileSync(
      file,
      `${fs.readFileSync(signers(), 'utf8')}carol@x ${fs
        .readFileSync(`${keygen('bob')}.pub`, 'utf8')
        .trim()
        .split(' ')
        .slice(0, 2)
        .join(' ')}\n`,
    );
  return file;
};
/** The promoted tree, signing started by alice. */
const signedPromoted = () =>
  template('signed-promoted', (k) => {
    fs.cpSync(promoted(), k, {recursive: true});
    expect(
      cli(k, ['signing', 'start', '--from', signers(), '--signing-key', keygen('alice'), '--actor', 'alice@x']).status,
    ).toBe(0);
  });
let signedKey = '';
const signedEmergency = () =>
  template('signed-emergency', (k) => {
    fs.cpSync(signedPromoted(), k, {recursive: true});
    signedKey = cli(k, [
      'rollback',
      '--emergency',
      '--rationale',
      'stop',
      '--actor',
      'alice@x',
      '--signing-key',
      keygen('alice'),
    ]).json.execution_key;
  });

/** An evidence package of the baseline (its playbook as a components-layout system prompt). */
const evidencePackage = (n = 9) => {
  const file = path.join(root, `evidence-package-${n}.json`);
  const baseline = JSON.parse(
    fs.readFileSync(path.join(initialized(), 'demo/context_bundles/active.json'), 'utf8'),
  ).bundle_digest;
  fs.writeFileSync(
    file,
    JSON.stringify({
      schema: 'autoctx.evidence-package.v1',
      scenario: 'demo',
      correlation_id: `crash-${n}`,
      bundle_digest: baseline,
      layout: 'autoctx-components-v1',
      system_prompt: 'Be helpful.\n',
      user_prompt: 'hello',
    }),
  );
  return file;
};
/** Two sealed packages, not yet inspected. */
const sealedEvidence = () =>
  template('sealed-evidence', (k) => {
    fs.cpSync(initialized(), k, {recursive: true});
    for (let i = 0; i < 2; i++)
      expect(cli(k, ['evidence', 'seal', '--from', evidencePackage(i)]).json.status).toBe('sealed');
  });
function evidenceFiles(k: string, sub: string): string[] {
  const dir = path.join(k, '.state/evidence');
  return fs.existsSync(dir)
    ? (fs.readdirSync(dir, {recursive: true}) as string[])
        .filter((f) => f.includes(`${sub}/`) && f.endsWith('.json'))
        .sort()
    : [];
}
const inspections = (k: string) =>
  evidenceFiles(k, 'inspections').map(
    (f) => JSON.parse(fs.readFileSync(path.join(k, '.state/evidence', f), 'utf8')).verdict,
  );

/** The signing history and the signatures (counted per folder: a re-run signs records of its own time). */
function signingState(k: string): unknown {
  const dir = path.join(k, 'demo/context_bundles');
  const allowed = path.join(k, 'demo/allowed_signers');
  // A signature written before its record, the record then cut short, is a leftover (ORPHAN_SIGNATURE) that repair
  // removes.
  const sigs = fs.existsSync(dir)
    ? (fs.readdirSync(dir, {recursive: true}) as string[])
        .filter((f) => f.endsWith('.sig') && fs.existsSync(path.join(dir, f.slice(0, -4))))
        .map((f) => path.dirname(f))
        .sort()
    : [];
  const start = path.join(dir, 'signing/start.json');
  return {
    allowed: fs.existsSync(allowed) ? fs.readFileSync(allowed, 'utf8') : null,
    start: fs.existsSync(start) ? JSON.parse(fs.readFileSync(start, 'utf8')).unsigned.length : null,
    changes: fs.existsSync(path.join(dir, 'signing/signers'))
      ? fs.readdirSync(path.join(dir, 'signing/signers')).filter((f) => f.endsWith('.json')).length
      : 0,
    sigs,
  };
}

/** The rollback service's records: executions (without their keys and times) and approvals. */
function rollbackState(k: string): unknown {
  const dir = path.join(k, 'demo/context_bundles/rollbacks');
  if (!fs.existsSync(dir)) return null;
  const read = (f: string) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  const executions = fs
    .readdirSync(dir)
    .filter((f) => /^RBX-.*\.json$/.test(f))
    .map((f) => {
      const r = read(f);
      return {
        status: r.status,
        scope: r.scope,
        emergency: r.emergency,
        from: r.from_digest,
        to: r.to_digest,
        actor: r.actor,
        conditions: r.conditions,
      };
    });
  const approvals = fs.existsSync(path.join(dir, 'approvals'))
    ? fs
        .readdirSync(path.join(dir, 'approvals'))
        .filter((f) => f.endsWith('.json'))
        .map((f) => read(`approvals/${f}`).approved_by)
    : [];
  return {executions, approvals, legacy: fs.readdirSync(dir).filter((f) => /^[0-9a-f]{32}\.json$/.test(f)).length};
}

/** v2 as a SHADOW release sampling every event, five a day. */
const shadowed = () =>
  template('shadowed', (k) => {
    fs.cpSync(released(), k, {recursive: true});
    expect(
      cli(k, [
        'release',
        'transition',
        'v2',
        '--to',
        'SHADOW',
        '--shadow-percent',
        '100',
        '--shadow-daily-cap',
        '5',
        '--rationale',
        'shadow',
      ]).status,
    ).toBe(0);
  });

/** The shadow counters: each day's count, read back through their schema by the next sample. */
function shadowCounts(k: string): number[] {
  const dir = path.join(k, '.state/shadow');
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).count as number)
    : [];
}

/**
 * A history entry's file as its place on its chain (its number, which verify holds to its place): its name is the
 * digest of its bytes, times included, which a re-run writes anew.
 */
const byPlace = (f: string, doc: {seq?: number; revision?: number}) =>
  f.replace(/[0-9a-f]{64}\.json$/, () => `#${String(doc.seq ?? doc.revision).padStart(6, '0')}`);
const sortByFirst = <T extends [string, unknown]>(list: T[]): T[] => list.sort((a, b) => (a[0] < b[0] ? -1 : 1));

/** Descriptors, registries and receipts, without the times and digests of times a re-run writes anew. */
function releaseState(k: string): unknown {
  const dir = path.join(k, 'demo/context_bundles/releases');
  if (!fs.existsSync(dir)) return null;
  return sortByFirst(releaseFiles(dir));
}

function releaseFiles(dir: string): Array<[string, unknown]> {
  return (fs.readdirSync(dir, {recursive: true}) as string[])
    .filter((f) => fs.statSync(path.join(dir, f)).isFile() && !/\.tmp$/.test(f))
    .sort()
    .map((f): [string, unknown] => {
      const doc = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
      if (f.startsWith('versions')) return [f, {...doc, created_at: null, digest: null}];
      if (f.startsWith('registry'))
        return [f, {releases: doc.releases, runnable: doc.runnable, receipt: doc.receipt?.seq}];
      return [
        byPlace(f, doc),
        {
          seq: doc.seq,
          version: doc.version,
          from: doc.from_state,
          to: doc.target_state,
          applied: doc.applied,
          blockers: doc.blockers.map((b: {code: string}) => b.code),
          promoted: doc.promotion_id !== null,
          releases: doc.registry?.releases ?? null,
        },
      ];
    });
}

/** The bootstrap curation and receipts, without the times a re-run writes anew. */
function bootstrapState(k: string): unknown {
  const read = (dir: string) => (fs.existsSync(dir) ? sortByFirst(readFiles(dir)) : []);
  const readFiles = (dir: string): Array<[string, unknown]> =>
    (fs.readdirSync(dir, {recursive: true}) as string[])
      .filter((f) => fs.statSync(path.join(dir, f)).isFile() && !f.endsWith('.gitignore') && !/\.tmp$/.test(f))
      .sort()
      .map((f) => {
        const {
          written_at: _w,
          created_at: _c,
          updated_at: _u,
          previous_entry_sha256: _p,
          previous_document_digest: _d,
          ...rest
        } = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
        const curation = rest.curation ?? rest;
        if (Array.isArray(curation.handoffs))
          curation.handoffs = curation.handoffs.map((h: {id: string; revision: number}) => [h.id, h.revision]);
        return [f.includes('handoffs') || f.includes('curation_history') ? byPlace(f, rest) : f, rest];
      });
  return {
    curation: read(path.join(k, 'demo/context_bundles/bootstrap')),
    receipts: read(path.join(k, '.state/bootstrap')),
  };
}

/** What a finished run leaves: the pointer and every candidate's lifecycle, comparison and evidence. */
function state(k: string): unknown {
  const dir = path.join(k, 'demo/context_bundles');
  if (!fs.existsSync(path.join(dir, 'active.json'))) return null;
  const active = JSON.parse(fs.readFileSync(path.join(dir, 'active.json'), 'utf8'));
  const candidates = fs.existsSync(path.join(dir, 'candidates'))
    ? fs.readdirSync(path.join(dir, 'candidates')).sort()
    : [];
  const mirror = (name: string) =>
    fs.existsSync(path.join(k, 'demo', name)) ? fs.readFileSync(path.join(k, 'demo', name), 'utf8') : null;
  // Harness validators' runtime files, and the plans a rebind kept, with their bytes.
  const files = (sub: string) => {
    const d = path.join(dir, sub);
    return fs.existsSync(d)
      ? (fs.readdirSync(d, {recursive: true}) as string[])
          .filter((f) => fs.statSync(path.join(d, f)).isFile())
          .sort()
          .map((f) => [f, fs.readFileSync(path.join(d, f), 'utf8')])
      : [];
  };
  return {
    bootstrap: bootstrapState(k),
    releases: releaseState(k),
    rollbacks: rollbackState(k),
    signing: signingState(k),
    active: active.bundle_digest,
    runtime: files('runtime'),
    // The mirrors too: a re-run that finds the move done brings them in line.
    mirrors: {playbook: mirror('playbook.md'), hints: mirror('hints.md')},
    candidates: candidates.map((d) => {
      const c = path.join(dir, 'candidates', d);
      const record = fs.existsSync(path.join(c, 'record.json'))
        ? JSON.parse(fs.readFileSync(path.join(c, 'record.json'), 'utf8'))
        : null;
      const evidence = fs.existsSync(path.join(c, 'matched_trials.json'))
        ? fs.readFileSync(path.join(c, 'matched_trials.json'), 'utf8')
        : null;
      const plan = fs.existsSync(path.join(c, 'evaluator_plan.json'))
        ? JSON.parse(fs.readFileSync(path.join(c, 'evaluator_plan.json'), 'utf8')).plan_digest
        : null;
      return {
        d,
        lifecycle: record?.lifecycle,
        comparison: record?.comparison,
        policy: record?.confirmation_policy_digest ?? null,
        evidence,
        plan,
        superseded: files(`candidates/${d}/superseded_plans`),
        negative: fs.existsSync(path.join(c, 'negative_result.json')),
        observations: fs.existsSync(path.join(c, 'trial_observations.json'))
          ? fs.readFileSync(path.join(c, 'trial_observations.json'), 'utf8')
          : null,
        guardrails: fs.existsSync(path.join(c, 'promotion_guardrails.json'))
          ? fs.readFileSync(path.join(c, 'promotion_guardrails.json'), 'utf8')
          : null,
      };
    }),
  };
}

function temps(k: string): string[] {
  if (!fs.existsSync(k)) return [];
  return (fs.readdirSync(k, {recursive: true}) as string[]).filter((f) => /\.tmp$/.test(f));
}

interface Scenario {
  name: string;
  from: () => string;
  args: () => string[];
  /** Exit codes a re-run may end with: a claim made durable before the kill is claimed once (exit 6 when run again). */
  rerun?: number[];
  /** A further check of the tree after the re-run. */
  after?: (k: string) => void;
}

/** The knowledge tree of the uninterrupted run of the scenario under test. */
let crashClean: string | undefined;

const scenarios: Scenario[] = [
  {name: 'init', from: empty, args: () => ['init', '--scenario', 'demo', '--from', base]},
  {name: 'repair (the .gitattributes an older tree lacks)', from: withoutAttributes, args: () => ['repair']},
  {name: 'propose', from: initialized, args: () => ['propose', '--from', cand, '--run-id', 'crash']},
  {name: 'confirm (trial recording)', from: proposed, args: () => ['confirm', candidate, ...evaluation]},
  // Observations are journaled with each pair and folded with it: a resumed run records them as an uninterrupted one.
  {
    name: 'confirm with an evaluator that observes metrics and keeps artifacts (trial observations)',
    from: proposed,
    args: () => ['confirm', candidate, ...evaluation.map((x) => (x === `node ${FAKE}` ? `node ${OBSERVING}` : x))],
  },
  {
    name: 'confirm with a campaign (reservations)',
    from: proposed,
    args: () => ['confirm', candidate, ...evaluation, '--campaign', 'crash-campaign'],
  },
  {name: 'promote', from: confirmed, args: () => ['promote', candidate]},
  // The guardrails' verdicts are written before the promotion record: a re-run writes the same file and goes on.
  {name: 'promote under a guardrail (promotion guardrails)', from: guarded, args: () => ['promote', candidate]},
  {
    name: 'rollback',
    from: promoted,
    args: () => ['rollback', '--rationale', 'crash test', '--expect-active', candidate],
  },
  // The Python implementation's rollback pointer is kept in foreign_moves/ before autoctx moves on from it.
  {
    name: "rollback from the Python implementation's rollback (the foreign move kept, the record, the pointer)",
    from: pythonRolledBack,
    args: () => [
      'rollback',
      '--scenario',
      'rolled',
      '--rationale',
      'crash test',
      '--expect-active',
      'b258b0aa65e748cd68adecaedf92828bc7195e8b894b77f31ab6c2b89603bd1c',
    ],
    after: (k) => expect(foreignState(k)).toEqual(foreignState(crashClean!)),
  },
  {
    name: 'rollback --emergency',
    from: promoted,
    args: () => [
      'rollback',
      '--emergency',
      '--rationale',
      'crash test',
      '--actor',
      'alice',
      '--expect-active',
      candidate,
    ],
  },
  {
    name: 'rollback --scope (the record, a rollback receipt, then the registry)',
    from: scopedTwo,
    args: () => [
      'rollback',
      '--scope',
      'eu',
      '--rationale',
      'crash test',
      '--expect-active',
      (scopedTwo(), thirdDigest),
    ],
  },
  // An approval made durable before the kill is made once: the re-run is refused (ALREADY_APPROVED, exit 3).
  {
    name: 'rollback approve',
    from: emergency,
    args: () => ['rollback', 'approve', executionKey, '--actor', 'bob'],
    rerun: [0, 3],
  },
  {
    name: 'signing start (the signed start record, then allowed_signers)',
    from: promoted,
    args: () => ['signing', 'start', '--from', signers(), '--signing-key', keygen('alice'), '--actor', 'alice@x'],
  },
  {
    name: 'signing signers (a signed change, then allowed_signers)',
    from: signedPromoted,
    args: () => ['signing', 'signers', '--from', signersNext(), '--signing-key', keygen('alice'), '--actor', 'alice@x'],
  },
  {
    name: 'rollback, signed (the signature, the record, the pointer)',
    from: signedPromoted,
    args: () => [
      'rollback',
      '--rationale',
      'crash test',
      '--actor',
      'alice@x',
      '--signing-key',
      keygen('alice'),
      '--expect-active',
      candidate,
    ],
  },
  {
    name: 'rollback approve, signed',
    from: signedEmergency,
    args: () => ['rollback', 'approve', signedKey, '--actor', 'bob@x', '--signing-key', keygen('bob')],
    rerun: [0, 3],
  },
  {
    name: 'evidence seal (a package and the sampling counter in the state area)',
    from: initialized,
    args: () => ['evidence', 'seal', '--from', evidencePackage()],
    after: (k) => expect(evidenceFiles(k, 'packages')).toHaveLength(1),
  },
  {
    name: 'inspect run (the inspections in the state area)',
    from: sealedEvidence,
    args: () => ['inspect', 'run'],
    after: (k) => expect(inspections(k)).toEqual(['PASS', 'PASS']),
  },
  {
    name: 'evidence prune',
    from: sealedEvidence,
    args: () => ['evidence', 'prune', '--now', '2099-01-01T00:00:00Z'],
    after: (k) => expect(evidenceFiles(k, 'packages')).toEqual([]),
  },
  {name: 'epoch rollover', from: initialized, args: () => ['epoch', 'rollover', '--evaluator-epoch', 'epoch-2']},
  {
    name: 'trials ingest',
    from: exported,
    args: () => ['trials', 'ingest', candidate, path.join(root, 'results.jsonl')],
  },
  {name: 'reject', from: confirmed, args: () => ['reject', candidate, '--rationale', 'crash test']},
  // A rejected bundle never serves: the canary is ended by its receipt (then the registry) before the negative result
  // and the record.
  {
    name: "reject a CANARY's bundle (a receipt, the registry, the negative result, the record)",
    from: canaried,
    args: () => ['reject', candidate, '--rationale', 'crash test'],
  },
  {
    name: 'propose with a harness validator (its runtime file)',
    from: initialized,
    args: () => ['propose', '--from', candHarness, '--run-id', 'crash-harness'],
  },
  {
    name: 'confirm --rebind (the old plan kept, the new one bound)',
    from: typoBound,
    args: () => ['confirm', candidate, ...evaluation, '--rebind'],
  },
  {
    name: 'trials migrate (legacy evidence to schema 2)',
    from: legacy,
    args: () => ['trials', 'migrate', candidate, '--policy', POLICY_SMALL],
  },
  {name: 'tag add', from: initialized, args: () => ['tag', 'add', (tagged(), playbookDigest)]},
  {name: 'tag rm', from: tagged, args: () => ['tag', 'rm', playbookDigest]},
  {name: 'reference add', from: initialized, args: () => ['reference', 'add', 'billing']},
  {name: 'grant add', from: initialized, args: () => ['grant', 'add', 'billing']},
  {
    name: 'handoff write (a first revision)',
    from: initialized,
    args: () => ['handoff', 'write', '--id', 'notes', '--from', handoff2],
  },
  {
    name: 'handoff write (the next revision)',
    from: tagged,
    args: () => ['handoff', 'write', '--id', 'notes', '--from', handoff2],
  },
  {name: 'bootstrap prepare (a receipt in the state area)', from: tagged, args: () => PREPARE},
  {
    name: 'bootstrap claim',
    from: prepared,
    args: () => ['bootstrap', 'claim', receiptId, '--outcome', 'injected'],
    rerun: [0, 6],
  },
  {name: 'release name', from: confirmed, args: () => ['release', 'name', 'v2', candidate]},
  {
    name: 'release transition (a receipt, then the registry)',
    from: released,
    args: () => ['release', 'transition', 'v2', '--to', 'SHADOW', '--shadow-percent', '5', '--rationale', 'crash'],
  },
  {
    name: 'release transition to ACTIVE (the promotion, then the receipt)',
    from: canaried,
    args: () => ['release', 'transition', 'v2', '--to', 'ACTIVE', '--rationale', 'crash'],
  },
  {
    name: 'release runnable',
    from: released,
    args: () => ['release', 'runnable', 'v1', 'v2', '--default', 'v1', '--rationale', 'crash'],
  },
  // A sample consumed before the kill is counted: the re-run takes a second (the count is at least the uninterrupted
  // one's, never corrupt).
  {
    name: 'shadow sample --consume (a counter in the state area)',
    from: shadowed,
    args: () => ['shadow', 'sample', '--event', 'crash-event', '--consume'],
    after: (k) => expect([1, 2]).toContain(Math.max(...shadowCounts(k))),
  },
];

describe('crash injection: SIGKILL before and after every durable write', () => {
  it.each(scenarios.map((s) => [s.name, s] as const))('%s', (_name, s) => {
    const fresh = () => {
      const k = path.join(tempDir('autoctx-crash-run-'), 'knowledge');
      if (fs.existsSync(s.from())) fs.cpSync(s.from(), k, {recursive: true});
      return k;
    };
    const clean = fresh();
    const trace = path.join(root, `trace-${s.name.replace(/\W+/g, '-')}`);
    const expected = cli(clean, s.args(), {AUTOCTX_FAULT_TRACE: trace});
    crashClean = clean;
    const points = fs
      .readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[0]!);
    expect(points.length).toBeGreaterThan(1);
    // Each durable write is traced twice, before and after it, numbered from one without a gap.
    expect(points).toEqual(points.map((_, i) => `${Math.floor(i / 2) + 1}:${i % 2 === 0 ? 'before' : 'after'}`));
    const cleanState = state(clean);
    const crashedAt: string[] = [];
    for (const point of points) {
      const k = fresh();
      const crashed = cli(k, s.args(), {AUTOCTX_FAULT: point});
      expect([point, crashed.status]).toEqual([point, null]);
      const activeFile = path.join(k, 'demo/context_bundles/active.json');
      if (fs.existsSync(activeFile)) {
        const active = JSON.parse(fs.readFileSync(activeFile, 'utf8'));
        expect(fs.existsSync(path.join(k, 'demo/context_bundles/bundles', `${active.bundle_digest}.json`))).toBe(true);
      }
      if (['demo', 'rolled'].some((scenario) => fs.existsSync(path.join(k, scenario, 'context_bundles'))))
        expect([point, verify({knowledge: k}).errors]).toEqual([point, []]);
      const again = cli(k, s.args());
      if (s.rerun) expect([point, s.rerun.includes(again.status!)]).toEqual([point, true]);
      else expect([point, again.status]).toEqual([point, expected.status]);
      expect([point, state(k)]).toEqual([point, cleanState]);
      s.after?.(k);
      // A writing command sweeps only the folders it writes into (nothing walks the tree);
      // what the crash left elsewhere verify reports, each file by name, and repair removes. The state
      // area, which verify skips, is swept once a day (.state/housekeeping.json) and by repair.
      const after = verify({knowledge: k});
      const left = temps(k);
      const outsideState = left.filter((f) => !f.startsWith(`.state${path.sep}`));
      expect([
        point,
        after.errors,
        after.warnings
          .filter((w) => w.code === 'LEFTOVER_TEMP')
          .map((w) => w.file)
          .sort(),
      ]).toEqual([point, [], [...outsideState].sort()]);
      if (left.length > 0) expect([point, cli(k, ['repair']).status]).toEqual([point, 0]);
      expect([point, temps(k)]).toEqual([point, []]);
      // Without a repair the tree is the one verified just above: its answer stands.
      const repaired = left.length > 0 ? verify({knowledge: k}) : after;
      expect([point, repaired.warnings.filter((w) => w.code === 'LEFTOVER_TEMP')]).toEqual([point, []]);
      crashedAt.push(point);
      covered.push(`${s.name} ${point}`);
      fs.rmSync(path.dirname(k), {recursive: true, force: true});
    }
    // Every fault point the uninterrupted run passed was crashed at, each once.
    expect(crashedAt).toEqual(points);
    traced.push(points.length);
  });

  it('covered every fault point of every command', () => {
    // Listed for the record (the closing note quotes the count).
    process.stdout.write(`crash injection: ${covered.length} fault points covered\n`);
    expect(covered.length).toBeGreaterThan(50);
    expect(traced).toHaveLength(scenarios.length);
    expect(covered).toHaveLength(traced.reduce((a, b) => a + b, 0));
  });
});
