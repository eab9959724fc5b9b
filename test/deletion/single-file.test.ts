import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {stableDigest} from '../../src/canonical/index.js';
import {verify} from '../../src/core/common/verify.js';
import {receiptCore} from '../../src/model/release/release.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {historyTree} from '../helpers/pipeline.js';
import {tempDir} from '../helpers/tree.js';
import {foreignMoveTree, kindsMissing, markerTree} from '../helpers/kind-trees.js';

/**
 * Files whose loss verify accepts, each with its reason; docs/guarantees.md
 * ("Safe to lose") lists the same patterns, and this test checks that it does.
 */
const SAFE_TO_LOSE: Array<[RegExp, string]> = [
  [
    /^\.gitignore$/,
    'the root .gitignore: trees the Python implementation writes ' +
      'have none, and any writing command or repair writes it',
  ],
  [
    /^\.gitattributes$/,
    'the root .gitattributes: trees made before autoctx wrote it have none; ' +
      'its loss is a warning (GITATTRIBUTES_MISSING) and repair writes it',
  ],
  [
    /^demo\/(playbook|hints)\.md$/,
    'mirrors of the active bundle, for people and legacy readers: repair rewrites them from the manifest',
  ],
  [
    /^demo\/negative_result_ledgers\/context-bundle-[0-9a-f]{64}\.json$/,
    "the discoverable copy of a negative result: a warning that repair restores from the candidate's own",
  ],
  [
    /^demo\/context_bundles\/runtime\/[0-9a-f]{64}\/harness\/[A-Za-z_][A-Za-z0-9_]*\.py$/,
    "a harness validator's runtime file: it derives from the manifest, a warning that repair writes back",
  ],
  [
    /^demo\/context_bundles\/reconciles\/[0-9a-f]{64}\.json$/,
    "reconcile's account of what became of the other side's changes after a merge: the changes it made again carry " +
      'their own records; the account is written once, so `verify --extends` of any later revision names its loss',
  ],
  [
    /^demo\/context_bundles\/candidates\/[0-9a-f]{64}\/trial_observations\.json$/,
    'what the evaluator observed beside the scores (metrics, checker verdicts, artifact digests): descriptive, no ' +
      'decision, seal or replay reads it; its loss only takes those figures out of status and report',
  ],
  [
    /^demo\/context_bundles\/rollbacks\/approvals\/RBX-\d{14}-[0-9a-f]{8}\.json$/,
    "an emergency rollback's approval: its loss makes the rollback read AWAITING_APPROVAL again " +
      '(EXPIRED_UNAPPROVED once its window closed), which status and verify show: less approved, never more',
  ],
];

/**
 * A refused rollback's record changed nothing else: a tree without it is one in which the refusal was never attempted
 * (docs/guarantees.md says so).
 */
const refusedRecord = (file: string) =>
  /\/rollbacks\/RBX-[^/]+\.json$/.test(file) && JSON.parse(fs.readFileSync(file, 'utf8')).status === 'REFUSED';

/** Each tree built once, by the test that deletes its files or by the one that checks the kinds they hold. */
const once = <T>(build: () => T): (() => T) => {
  let made: {value: T} | undefined;
  return () => (made ??= {value: build()}).value;
};
/** A tree with a promotion, a rejection, two rollbacks, an epoch rollover and a campaign. */
const fullTree = once(() => {
  const t = historyTree(true);
  dirs.push(t.dir);
  return t.knowledge;
});
/**
 * A Python-written tree autoctx rolled back from (its foreign_moves/ record), then signed: a signers change, a signed
 * rollback, the state chain.
 */
const foreignTree = once(() => {
  const t = foreignMoveTree();
  dirs.push(t.dir);
  return t;
});

function filesOf(root: string): string[] {
  return (
    (fs.readdirSync(root, {recursive: true, withFileTypes: true}) as fs.Dirent[])
      .filter((e) => e.isFile())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
      // the per-machine state area: never committed, and the one folder verify skips
      .filter((rel) => !rel.startsWith(`.state${path.sep}`))
      .sort()
  );
}

/** The codes of a pointer history with a move missing from its record. */
const HISTORY_CODES = new Set(['POINTER_NOT_RECORDED', 'HISTORY_GAP', 'ROLLBACK_NOT_SERVED']);

const dirs: string[] = [];
const summary: string[] = [];
afterAll(() => {
  dirs.forEach((d) => fs.rmSync(d, {recursive: true, force: true}));
  // What each deletion made verify report: the figures the closing notes quote.
  if (summary.length > 0)
    process.stdout.write(`single-file deletion: ${summary.length} files\n${summary.map((l) => `  ${l}`).join('\n')}\n`);
});

/**
 * Deleting each file of a copy of `knowledge` in turn: what verify then says of it, one line per file.
 * `strict`: the error must name the deleted file itself (or a message must), never only the move it recorded.
 */
function deleteEach(knowledge: string, strict: boolean, allowedSigners?: string): string[] {
  const files = filesOf(knowledge);
  const outcome: string[] = [];
  for (const rel of files) {
    const copy = path.join(tempDir('autoctx-delete-'), 'knowledge');
    dirs.push(path.dirname(copy));
    fs.cpSync(knowledge, copy, {recursive: true});
    // A promotion or rollover record lives under a random or derived id that nothing else names: its loss is named by
    // the move it recorded.
    // A rollback's execution record is named by the record histories of the two bundles it moved between, so its loss
    // must name it.
    const move = /\/(promotions|rollovers)\//.test(rel)
      ? JSON.parse(fs.readFileSync(path.join(copy, rel), 'utf8'))
      : null;
    const movedTo: string | null = move && !strict ? (move.candidate_digest ?? move.to_digest) : null;
    fs.rmSync(path.join(copy, rel));
    const r = verify({knowledge: copy, allowedSigners});
    // The patterns name the scenario demo; a tree of another scenario's name is matched as if it were demo.
    const safe =
      SAFE_TO_LOSE.find(([re]) => re.test(rel.replace(/^[^/]+\//, 'demo/'))) ??
      (refusedRecord(path.join(knowledge, rel)) ? [/refused/, 'a refused rollback'] : undefined);
    // A change of the signed state chain is named by its SHA-256, as the change after it (or the anchor's pin) names
    // it.
    const change = /\/signing\/chain\/([0-9a-f]{64})\.json$/.exec(rel)?.[1];
    // A release receipt nothing after it names is named by the registry it wrote: by number and by the digest of the
    // receipt but for that registry (its file's name is the digest of the whole, which only the receipt after it
    // knows).
    const receipt = /\/releases\/receipts\/[^/]+\/[0-9a-f]{64}\.json$/.test(rel)
      ? stableDigest(receiptCore(JSON.parse(fs.readFileSync(path.join(knowledge, rel), 'utf8'))))
      : undefined;
    // Likewise the newest curation entry: curation.json names it by its state number.
    const curationState = /\/bootstrap\/curation_history\/[0-9a-f]{64}\.json$/.test(rel)
      ? (JSON.parse(fs.readFileSync(path.join(knowledge, rel), 'utf8')).seq as number)
      : undefined;
    const named = r.errors.some(
      (e) =>
        e.file === rel ||
        e.message.includes(rel) ||
        (change !== undefined && e.message.includes(change)) ||
        (receipt !== undefined && e.code === 'MISSING_RECEIPT' && e.message.includes(receipt)) ||
        (curationState !== undefined &&
          e.code === 'MISSING_CURATION' &&
          e.message.includes(`has no entry for state ${curationState}:`)) ||
        (movedTo !== null && HISTORY_CODES.has(e.code) && e.message.includes(movedTo)),
    );
    summary.push(`${rel}: ${r.errors.map((e) => e.code).join(',') || `(${r.warnings.map((w) => w.code).join(',')})`}`);
    if (safe)
      outcome.push(`${rel}: ${r.errors.length === 0 ? 'safe' : `errors ${r.errors.map((e) => e.code).join(',')}`}`);
    else
      outcome.push(
        `${rel}: ` +
          `${named ? 'named' : `NOT NAMED (${r.errors.map((e) => `${e.code} ${e.file}`).join('; ') || 'no errors'})`}`,
      );
  }
  expect(outcome.length).toBe(files.length);
  return outcome.filter((o) => !o.endsWith(': named') && !o.endsWith(': safe'));
}

/**
 * v2 (one added component) made ACTIVE by release transitions, a stale candidate refused, then rolled back to v1
 * (test/helpers/kind-trees.ts).
 */
const rolledBackTree = once(() => {
  const t = markerTree();
  dirs.push(t.dir);
  return t.knowledge;
});

describe('single-file deletion, exhaustively', () => {
  it(
    'deleting any one file of a full tree makes verify report an error ' +
      'naming it, except the files docs/guarantees.md lists as safe to lose',
    () => {
      const k = fullTree();
      expect(verify({knowledge: k})).toMatchObject({status: 'ok', errors: [], warnings: []});
      const files = filesOf(k);
      for (const want of [
        /^demo\/context_bundles\/promotions\//,
        /^demo\/context_bundles\/rollbacks\//,
        /^demo\/context_bundles\/rollovers\//,
        /negative_result\.json$/,
        /false-promotion\.json$/,
        /reservation-artifacts\//,
        /evidence_seal\.json$/,
        /evaluator_plan\.json$/,
        /\/runtime\/[0-9a-f]{64}\/harness\//,
        /\/superseded_plans\//,
      ]) {
        expect([String(want), files.some((f) => want.test(f))]).toEqual([String(want), true]);
      }
      expect(deleteEach(k, false)).toEqual([]);
    },
  );

  it(
    "a tree whose newest move is autoctx's own rollback: deleting any one " +
      'file, its execution record included, is an error naming that very file',
    () => {
      const k = rolledBackTree();
      expect(verify({knowledge: k})).toMatchObject({status: 'ok', errors: [], warnings: [], notes: []});
      expect(filesOf(k).filter((f) => /\/rollbacks\/RBX-[^/]+\.json$/.test(f))).toHaveLength(1);
      expect(deleteEach(k, true)).toEqual([]);
    },
  );

  it(
    'a Python-written tree autoctx moved on from, then signed: deleting any one file, the kept ' +
      'foreign move and every signed chain file included, is an error naming that very file',
    () => {
      const {knowledge, anchor} = foreignTree();
      expect(verify({knowledge, allowedSigners: anchor})).toMatchObject({status: 'ok', errors: [], warnings: []});
      const files = filesOf(knowledge);
      for (const want of [
        /\/foreign_moves\/[0-9a-f]{32}\.json$/,
        /\/signing\/chain\/[0-9a-f]{64}\.json$/,
        /\/signing\/chain\/[0-9a-f]{64}\.json\.sig$/,
        /\/signing\/signers\/000001\.json$/,
      ]) {
        expect([String(want), files.some((f) => want.test(f))]).toEqual([String(want), true]);
      }
      expect(deleteEach(knowledge, true, anchor)).toEqual([]);
    },
  );

  it(
    'the trees deleted from hold a file of every document kind the ' +
      'store keeps in a committed tree (test/helpers/kind-trees.ts)',
    () => {
      const files = [fullTree(), rolledBackTree(), foreignTree().knowledge].flatMap(filesOf);
      expect(kindsMissing(files)).toEqual([]);
    },
  );

  it('docs/guarantees.md lists every file that is safe to lose, with its reason', () => {
    const doc = fs.readFileSync(path.join(PROJECT_ROOT, 'docs/guarantees.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### Safe to lose'));
    expect(section.length).toBeGreaterThan(20);
    for (const [re] of SAFE_TO_LOSE)
      expect([String(re), section.includes(`\`${re.source}\``)]).toEqual([String(re), true]);
  });
});
