import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {GITATTRIBUTES_BLOCK} from '../../src/store/kinds/common/gitattributes.js';
import {isRewritable} from '../../src/store/layout/rewritable-files.js';
import {runCli} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {DOCUMENT_KINDS, FILE_KINDS} from '../helpers/kind-trees.js';
import {tempDir, writeSource} from '../helpers/tree.js';

/**
 * The files autoctx rewrites in place (src/store/layout/rewritable-files.ts) against the .gitattributes `init` writes
 * (src/store/kinds/common/gitattributes.ts), as git itself reads them (`git check-attr`, `git check-ignore`, with the
 * repository's own configuration only): every committed file autoctx rewrites is never merged line by line (`-merge`)
 * nor converted (`-text`), and the block's "mutable documents" are exactly the committed files autoctx rewrites. The
 * paths are one of each kind the store keeps (test/helpers/kind-trees.ts, which must list every kind), each also with
 * a signature beside it.
 */
const H = 'a'.repeat(64);
const C = `demo/context_bundles/candidates/${H}`;
const SAMPLE: Record<string, string> = {
  active: 'demo/context_bundles/active.json',
  manifest: `demo/context_bundles/bundles/${H}.json`,
  'record-v2': `${C}/record.json`,
  'manifest-diff': `${C}/manifest_diff.json`,
  'matched-trials': `${C}/matched_trials.json`,
  'evidence-seal': `${C}/evidence_seal.json`,
  promotion: `demo/context_bundles/promotions/${'b'.repeat(32)}.json`,
  'rollback-execution': 'demo/context_bundles/rollbacks/RBX-20260101000000-0123abcd.json',
  'rollback-approval': 'demo/context_bundles/rollbacks/approvals/RBX-20260101000000-0123abcd.json',
  'signing-start': 'demo/context_bundles/signing/start.json',
  'signers-change': 'demo/context_bundles/signing/signers/000001.json',
  'state-change': `demo/context_bundles/signing/chain/${H}.json`,
  rollover: `demo/context_bundles/rollovers/${'c'.repeat(32)}.json`,
  'foreign-move': `demo/context_bundles/foreign_moves/${'d'.repeat(32)}.json`,
  'reconcile-record': `demo/context_bundles/reconciles/${'e'.repeat(64)}.json`,
  'record-history-entry': `${C}/record_history/${'e'.repeat(64)}.json`,
  'record-histories': 'demo/context_bundles/record_histories.json',
  curation: 'demo/context_bundles/bootstrap/curation.json',
  'curation-entry': `demo/context_bundles/bootstrap/curation_history/${H}.json`,
  handoff: `demo/context_bundles/bootstrap/handoffs/notes/${H}.json`,
  'release-descriptor': 'demo/context_bundles/releases/versions/v1.json',
  'release-registry': 'demo/context_bundles/releases/registry/global.json',
  'release-receipt': `demo/context_bundles/releases/receipts/global/${H}.json`,
  'negative-result': `${C}/negative_result.json`,
  'evaluator-plan': `${C}/evaluator_plan.json`,
  'trial-observations': `${C}/trial_observations.json`,
  'promotion-guardrails': `${C}/promotion_guardrails.json`,
  'false-promotion': 'demo/context_bundles/promotion-risk/spring/false-promotion.json',
  'reservation-artifact': `demo/context_bundles/promotion-risk/spring/reservation-artifacts/${H}.json`,
  'stale-terminalization': `${C}/stale_terminalization.json`,
  'causal-attribution': `${C}/causal_attribution.json`,
  signature: `${C}/record.json.sig`,
  'allowed signers': 'demo/allowed_signers',
  mirror: 'demo/playbook.md',
  'harness runtime file': `demo/context_bundles/runtime/${H}/harness/check_answer.py`,
  'superseded plan': `${C}/superseded_plans/${H}.json`,
  'negative result ledger copy': `demo/negative_result_ledgers/context-bundle-${H}.json`,
  gitattributes: '.gitattributes',
};
/** Files of no kind of their own: the root's, the other mirror, and what is never committed. */
const OTHERS = [
  '.gitignore',
  'autoctx.config.json',
  'demo/hints.md',
  '.state/housekeeping.json',
  'demo/context_bundles/autoctx.lock',
  `demo/context_bundles/.${'f'.repeat(8)}.autoctx-1a2b.tmp`,
];
/** git's own files at the root: a person's lines in them merge as git merges them. */
const GITS_OWN = new Set(['.gitignore', '.gitattributes']);

const paths = (): string[] => {
  const kept = Object.values(SAMPLE).filter((p) => !p.endsWith('.sig') && !GITS_OWN.has(p));
  return [...new Set([...Object.values(SAMPLE), ...OTHERS, ...kept.map((p) => `${p}.sig`)])].sort();
};

/** A repository whose knowledge/ was made by `autoctx init` (its .gitignore and .gitattributes). */
function initRepo(): string {
  const dir = tempDir('autoctx-git-rewritable-');
  const src = writeSource(path.join(dir, 'src'), {'playbook/playbook.md': 'Be helpful.\n'});
  const r = runCli(['init', '--scenario', 'demo', '--from', src, '--knowledge', path.join(dir, 'knowledge'), '--json']);
  if (r.status !== 0) throw new Error(r.stdout + r.stderr);
  git(dir, ['init', '-q', '-b', 'main']);
  return path.join(dir, 'knowledge');
}

function git(cwd: string, args: string[], input?: string, ok = [0]): string {
  const r = spawnSync('git', args, {
    cwd,
    input,
    encoding: 'utf8',
    env: {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1'},
  });
  if (!ok.includes(r.status ?? -1)) throw new Error(`git ${args.join(' ')} → ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** `attribute` of each path as git reads it in `knowledge` ('set', 'unset', 'unspecified' or a value). */
function attributes(knowledge: string, files: string[], attribute: string): Map<string, string> {
  const out = git(knowledge, ['check-attr', '-z', '--stdin', attribute], files.join('\0')).split('\0').slice(0, -1);
  const map = new Map<string, string>();
  for (let i = 0; i + 2 < out.length; i += 3) map.set(out[i]!, out[i + 2]!);
  return map;
}

/** The paths of `files` git ignores in `knowledge` (never committed). */
function ignored(knowledge: string, files: string[]): Set<string> {
  const out = git(knowledge, ['check-ignore', '--no-index', '-z', '--stdin'], files.join('\0'), [0, 1]);
  return new Set(out.split('\0').filter((f) => f !== ''));
}

/** The patterns of the block's section of mutable documents (from its comment to the next comment). */
function mutableSection(): string[] {
  const lines = GITATTRIBUTES_BLOCK.split('\n');
  const start = lines.findIndex((l) => l.startsWith('# Mutable documents'));
  const end = lines.findIndex((l, i) => i > start && l.startsWith('#'));
  expect([start > 0, end > start + 1]).toEqual([true, true]);
  return lines.slice(start + 1, end).map((l) => {
    const [pattern, ...attrs] = l.split(' ');
    expect([l, attrs]).toEqual([l, ['-merge']]);
    return pattern!;
  });
}

describe('the files autoctx rewrites and the .gitattributes init writes', () => {
  it('one path of every kind the store keeps, each matching its kind', () => {
    const kinds = [
      ...Object.entries(DOCUMENT_KINDS).flatMap(([k, v]) => (v instanceof RegExp ? [[k, v] as const] : [])),
      ...Object.entries(FILE_KINDS),
    ];
    expect(kinds.map(([k]) => k).filter((k) => !(k in SAMPLE))).toEqual([]);
    for (const [k, re] of kinds) expect([k, SAMPLE[k], re.test(SAMPLE[k]!)]).toEqual([k, SAMPLE[k], true]);
  });

  it(
    'every committed file autoctx rewrites is -merge and -text, and the ' +
      'mutable documents of the block are exactly those files',
    () => {
      const knowledge = initRepo();
      expect(fs.readFileSync(path.join(knowledge, '.gitattributes'), 'utf8')).toBe(GITATTRIBUTES_BLOCK);
      const all = paths();
      const notCommitted = ignored(knowledge, all);
      // What is never committed is what git ignores: the state area, locks, temporary files.
      expect([...notCommitted].sort()).toEqual(
        all.filter((p) => p.startsWith('.state/') || /(autoctx\.lock|\.tmp)$/.test(p)).sort(),
      );
      const committed = all.filter((p) => !notCommitted.has(p) && !GITS_OWN.has(p));
      const merge = attributes(knowledge, committed, 'merge');
      const text = attributes(knowledge, committed, 'text');
      const rewritable = committed.filter(isRewritable);
      expect(rewritable.length).toBeGreaterThan(15);
      expect(rewritable.filter((p) => merge.get(p) !== 'unset' || text.get(p) !== 'unset')).toEqual([]);

      // The block's mutable documents alone, as an attribute of their own: git names exactly the rewritable files.
      const probe = path.join(tempDir('autoctx-git-mutable-'), 'knowledge');
      fs.mkdirSync(probe, {recursive: true});
      git(path.dirname(probe), ['init', '-q', '-b', 'main']);
      fs.writeFileSync(
        path.join(probe, '.gitattributes'),
        mutableSection()
          .map((p) => `${p} autoctx-mutable\n`)
          .join(''),
      );
      const mutable = attributes(probe, committed, 'autoctx-mutable');
      const marked = committed.filter((p) => mutable.get(p) === 'set');
      expect({
        onlyMarked: marked.filter((p) => !isRewritable(p)),
        onlyRewritable: rewritable.filter((p) => !marked.includes(p)),
      }).toEqual({
        onlyMarked: [],
        onlyRewritable: [],
      });
    },
  );

  it(
    'the block an earlier autoctx wrote is a warning, not an edit, and repair ' +
      "writes the current one in its place (a person's lines kept)",
    () => {
      const knowledge = initRepo();
      const earlier = fs.readFileSync(path.join(PROJECT_ROOT, 'test/fixtures/gitattributes-earlier-block.txt'), 'utf8');
      const file = path.join(knowledge, '.gitattributes');
      fs.writeFileSync(file, `*.png binary\n${earlier}`);
      const v = runCli(['verify', '--knowledge', knowledge, '--json']);
      expect([v.status, v.json.errors, v.json.warnings.map((w: {code: string}) => w.code)]).toEqual([
        0,
        [],
        ['GITATTRIBUTES_MISSING'],
      ]);
      expect(v.json.warnings[0].message).toContain('an earlier autoctx');
      const r = runCli(['repair', '--knowledge', knowledge, '--json']);
      expect(r.status).toBe(0);
      expect(fs.readFileSync(file, 'utf8')).toBe(`*.png binary\n${GITATTRIBUTES_BLOCK}`);
      expect(runCli(['verify', '--knowledge', knowledge, '--json']).json).toMatchObject({errors: [], warnings: []});
    },
  );
});
