import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {cliIn, mustIn} from './knowledge-cli.js';
import {PROJECT_ROOT, RICH_KNOWLEDGE} from './paths.js';
import {evalArgs, FAKE, fakeEnv, makeTree, type Tree} from './pipeline.js';

const OBSERVING = path.join(PROJECT_ROOT, 'test/fixtures/evaluators/observing.js');
import {tempDir} from './tree.js';
import {checkout, commitAll, initRepo, merge, resolve} from './git.js';

/**
 * Where each document kind (schemas/<name>.schema.json) lives in a knowledge
 * tree, as a pattern of a file's path relative to the root; or, for a kind
 * no committed tree holds, why. The whole-tree suites (deletion, tamper)
 * check that their trees hold a file of every kind listed with a pattern,
 * and test/deletion/kind-coverage.test.ts that every schema is listed, so a
 * new kind cannot be left out of them unnoticed.
 */
export const DOCUMENT_KINDS: Record<string, RegExp | {outside: string}> = {
  active: /\/context_bundles\/active\.json$/,
  manifest: /\/context_bundles\/bundles\/[0-9a-f]{64}\.json$/,
  'record-v1': {
    outside:
      'schema-1 candidate records exist only in trees an older Python store wrote; ' +
      'verify reads them as records (test/cli/upstream-rich.test.ts), and no ' +
      'autoctx command or Python rollback leaves one in a tree these suites build',
  },
  'record-v2': /\/candidates\/[0-9a-f]{64}\/record\.json$/,
  'manifest-diff': /\/candidates\/[0-9a-f]{64}\/manifest_diff\.json$/,
  'matched-trials': /\/candidates\/[0-9a-f]{64}\/matched_trials\.json$/,
  'matched-trials-legacy': {
    outside:
      'legacy (schema-1) evidence, which verify only warns of (LEGACY_EVIDENCE) ' +
      'until trials migrate; test/cli/upstream-rich.test.ts covers it',
  },
  'evidence-seal': /\/candidates\/[0-9a-f]{64}\/evidence_seal\.json$/,
  'trial-observations': /\/candidates\/[0-9a-f]{64}\/trial_observations\.json$/,
  promotion: /\/context_bundles\/promotions\/[0-9a-f]{32}\.json$/,
  rollback: {
    outside:
      "the Python implementation's own rollback record (rollbacks/<32 " +
      'hex>.json); autoctx writes execution records (rollback-execution) instead',
  },
  'rollback-execution': /\/rollbacks\/RBX-\d{14}-[0-9a-f]{8}\.json$/,
  'rollback-approval': /\/rollbacks\/approvals\/RBX-\d{14}-[0-9a-f]{8}\.json$/,
  'signing-start': /\/signing\/start\.json$/,
  'signers-change': /\/signing\/signers\/\d{6}\.json$/,
  'state-change': /\/signing\/chain\/[0-9a-f]{64}\.json$/,
  'evidence-package': {
    outside: 'the per-machine state area (.state/evidence), which is never committed and which verify skips',
  },
  'evidence-record': {outside: 'the per-machine state area (.state/evidence)'},
  'evidence-inspection': {outside: 'the per-machine state area (.state/evidence)'},
  'evidence-sampling': {outside: 'the per-machine state area (.state/evidence)'},
  rollover: /\/context_bundles\/rollovers\/[0-9a-f]{32}\.json$/,
  'foreign-move': /\/context_bundles\/foreign_moves\/[0-9a-f]{32}\.json$/,
  'reconcile-record': /\/context_bundles\/reconciles\/[0-9a-f]{64}\.json$/,
  'record-history-entry': /\/candidates\/[0-9a-f]{64}\/record_history\/[0-9a-f]{64}\.json$/,
  'record-histories': /\/context_bundles\/record_histories\.json$/,
  curation: /\/bootstrap\/curation\.json$/,
  'curation-entry': /\/bootstrap\/curation_history\/[0-9a-f]{64}\.json$/,
  handoff: /\/bootstrap\/handoffs\/[^/]+\/[0-9a-f]{64}\.json$/,
  'release-descriptor': /\/releases\/versions\/[^/]+\.json$/,
  'release-registry': /\/releases\/registry\/[^/]+\.json$/,
  'release-receipt': /\/releases\/receipts\/[^/]+\/[0-9a-f]{64}\.json$/,
  'shadow-counter': {outside: 'the per-machine state area (.state/shadow)'},
  'bootstrap-receipt': {outside: 'the per-machine state area (.state/bootstrap)'},
  'host-state': {outside: "the user's configuration folder, outside any knowledge tree"},
  housekeeping: {outside: 'the per-machine state area (.state/housekeeping.json)'},
  'negative-result': /\/candidates\/[0-9a-f]{64}\/negative_result\.json$/,
  'evaluator-plan': /\/candidates\/[0-9a-f]{64}\/evaluator_plan\.json$/,
  'false-promotion': /\/promotion-risk\/[^/]+\/false-promotion\.json$/,
  'reservation-artifact': /\/promotion-risk\/[^/]+\/reservation-artifacts\/[0-9a-f]{64}\.json$/,
  'stale-terminalization': /\/candidates\/[0-9a-f]{64}\/stale_terminalization\.json$/,
  'causal-attribution': /\/candidates\/[0-9a-f]{64}\/causal_attribution\.json$/,
  'promotion-guardrails': /\/candidates\/[0-9a-f]{64}\/promotion_guardrails\.json$/,
  'trial-result': {
    outside: "a line of an evaluation engine's results file (trials ingest reads it); never stored as a document",
  },
  'work-unit': {outside: 'a line plan export writes for an evaluation engine, outside the tree'},
  'evaluation-request': {outside: 'a message to an evaluator process, never stored'},
  'agent-task': {outside: "a fixture's initial_state and observation that the agent evaluator runs, never stored"},
  'evaluation-answer': {outside: 'a message from an evaluator process, never stored'},
  'team-config': {
    outside:
      "knowledge/autoctx.config.json holds a team's evaluation defaults, read " +
      'only by the commands that evaluate; it records no state verify vouches for',
  },
  'user-config': {outside: "the user's configuration folder, outside any knowledge tree"},
};

/** Files that are not JSON documents, kept by their own kind modules. */
export const FILE_KINDS: Record<string, RegExp> = {
  signature: /\.sig$/,
  'allowed signers': /\/allowed_signers$/,
  mirror: /^[^/]+\/(playbook|hints)\.md$/,
  'harness runtime file': /\/runtime\/[0-9a-f]{64}\/harness\/[^/]+$/,
  'superseded plan': /\/superseded_plans\/[0-9a-f]{64}\.json$/,
  'negative result ledger copy': /\/negative_result_ledgers\/context-bundle-[0-9a-f]{64}\.json$/,
  gitattributes: /^\.gitattributes$/,
};

/** The document kinds of schemas/: every schema but the commands' results and the shared definitions. */
export function documentSchemas(): string[] {
  return fs
    .readdirSync(path.join(PROJECT_ROOT, 'schemas'))
    .filter((f) => f.endsWith('.schema.json') && !f.startsWith('result-') && f !== 'common.schema.json')
    .map((f) => f.slice(0, -'.schema.json'.length))
    .sort();
}

/**
 * The kinds (documents with a pattern, and file kinds) of which none of `files` (relative to a knowledge root,
 * `/`-separated) is one.
 */
/** The kind a file (relative to a knowledge root) is, by the patterns above; null for none. */
export function kindOf(file: string): string | null {
  const f = file.split(path.sep).join('/');
  const doc = Object.entries(DOCUMENT_KINDS).find(([, v]) => v instanceof RegExp && v.test(f));
  return doc?.[0] ?? Object.entries(FILE_KINDS).find(([, re]) => re.test(f))?.[0] ?? null;
}

export function kindsMissing(files: string[]): string[] {
  const slashed = files.map((f) => f.split(path.sep).join('/'));
  const patterns: Array<[string, RegExp]> = [
    ...Object.entries(DOCUMENT_KINDS).flatMap(([k, v]) => (v instanceof RegExp ? [[k, v] as [string, RegExp]] : [])),
    ...Object.entries(FILE_KINDS),
  ];
  return patterns.filter(([, re]) => !slashed.some((f) => re.test(f))).map(([k]) => k);
}

/** The signing keys of a tree: alice signs. */
export function keys(dir: string): {key: string; signers: string; next: string} {
  const key = path.join(dir, 'key-alice');
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice', '-f', key], {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(`ssh-keygen: ${r.stderr}`);
  const pub = fs.readFileSync(`${key}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  const signers = path.join(dir, 'allowed_signers');
  fs.writeFileSync(signers, `alice@x namespaces="autoctx" ${pub}\n`);
  const next = path.join(dir, 'allowed_signers.next');
  fs.writeFileSync(next, `alice@x namespaces="autoctx" ${pub}\nalice-too@x namespaces="autoctx" ${pub}\n`);
  return {key, signers, next};
}

/** A writable copy of the scenario `rolled` of test/fixtures/upstream-rich (alone) in a new knowledge root. */
export function copyRolledScenario(knowledge: string): void {
  fs.mkdirSync(knowledge, {recursive: true});
  fs.cpSync(path.join(RICH_KNOWLEDGE, 'rolled'), path.join(knowledge, 'rolled'), {recursive: true});
  fs.chmodSync(knowledge, 0o755);
  for (const e of fs.readdirSync(knowledge, {recursive: true}) as string[])
    fs.chmodSync(path.join(knowledge, e), fs.statSync(path.join(knowledge, e)).isDirectory() ? 0o755 : 0o644);
}

/**
 * The scenario `rolled` of test/fixtures/upstream-rich, whose newest pointer move is the Python
 * implementation's own rollback: autoctx rolls back from it (keeping that pointer in
 * foreign_moves/), signing starts, the signers change, and a signed rollback moves back (signed
 * state-chain files under signing/chain/). `anchor` is the allowed_signers file outside the tree,
 * its newest version, pinning the chain's head (docs/guarantees.md, "The anchor").
 */
export function foreignMoveTree(): {dir: string; knowledge: string; anchor: string} {
  const dir = tempDir('autoctx-foreign-');
  const knowledge = path.join(dir, 'knowledge');
  copyRolledScenario(knowledge);
  const {key, signers, next} = keys(dir);
  const at = ['--scenario', 'rolled'];
  mustIn(knowledge, ['rollback', ...at, '--rationale', 'the short answers were better']);
  mustIn(knowledge, ['signing', 'start', ...at, '--from', signers, '--signing-key', key, '--actor', 'alice@x']);
  mustIn(knowledge, ['signing', 'signers', ...at, '--from', next, '--signing-key', key, '--actor', 'alice@x']);
  mustIn(knowledge, [
    'rollback',
    ...at,
    '--rationale',
    'no, the long ones',
    '--actor',
    'alice@x',
    '--signing-key',
    key,
  ]);
  const head = cliIn(knowledge, ['verify', '--allowed-signers', next]).json.chain_heads.rolled as string;
  fs.appendFileSync(next, `# autoctx-chain rolled ${head}\n`);
  return {dir, knowledge, anchor: next};
}

/**
 * v1 the baseline, v2 (declares v1; one added component, so a causal attribution; a guardrail, so promotion
 * guardrails) made ACTIVE by release transitions (a receipt naming its promotion and the release it deprecated), a
 * candidate
 * confirmed against v1 refused as stale (a stale terminalization), then rolled back to v1: the newest
 * pointer move is autoctx's own rollback, whose active.json has the form another implementation's
 * rollback writes. Then a proposal rejected on two git branches, merged and reconciled (a reconcile record).
 */
export function markerTree(): Tree {
  const t = makeTree();
  // v2 adds one component to v1, so its promotion writes a causal attribution.
  const a = t.propose('better', {
    'playbook/playbook.md': 'Be helpful.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
    'hints/hints.md': 'Quota warnings come from the account page.\n',
  });
  const stale = t.propose('stale', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  // Both are evaluated by an evaluator that observes metrics and keeps artifacts (trial_observations.json); v2 under a
  // guardrail, whose verdict its promotion records (promotion_guardrails.json).
  const observing = evalArgs().map((x) => (x === `node ${FAKE}` ? `node ${OBSERVING}` : x));
  mustIn(t.knowledge, ['confirm', a, ...observing, '--guardrail', 'median(cost_usd) <= 1.25x'], 0, fakeEnv(t.dir));
  mustIn(t.knowledge, ['confirm', stale, ...observing], 0, fakeEnv(t.dir));
  mustIn(t.knowledge, ['release', 'name', 'v1', t.baseline]);
  mustIn(t.knowledge, ['release', 'name', 'v2', a, '--rollback-target', 'v1']);
  for (const to of ['SHADOW', 'CANARY', 'ACTIVE'])
    mustIn(t.knowledge, ['release', 'transition', 'v2', '--to', to, '--rationale', `v2 ${to}`]);
  // A candidate confirmed against v1, promoted once v2 serves: its evidence is stale (a stale terminalization).
  mustIn(t.knowledge, ['promote', stale], 6);
  mustIn(t.knowledge, ['rollback', '--to', 'v1', '--rationale', 'quality dropped']);
  // Two clones reject one proposal, each in their own words: the merge forks its record history, and reconcile joins
  // the two (a reconcile record).
  const twice = t.propose('twice', {'playbook/playbook.md': 'Be brief.\n', 'routing_config/roles.json': '{}'});
  initRepo(t.dir);
  checkout(t.dir, 'bob', true);
  mustIn(t.knowledge, ['reject', twice, '--rationale', 'too terse (bob)']);
  commitAll(t.dir, 'bob rejects');
  checkout(t.dir, 'main');
  mustIn(t.knowledge, ['reject', twice, '--rationale', 'too terse (alice)']);
  commitAll(t.dir, 'alice rejects');
  if (merge(t.dir, 'bob').length > 0) resolve(t.dir, 'ours');
  mustIn(t.knowledge, ['reconcile']);
  return t;
}
