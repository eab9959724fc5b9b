import {fail, isAutoctxError} from '../../../errors.js';
import {
  describeStep,
  type ReconcileRecord,
  type ReconcileSide,
  type ReconcileStep,
} from '../../../model/common/reconcile.js';
import {isoTimestamp} from '../../../model/promotion/records.js';
import {KnowledgeStore} from '../../../store/index.js';
import {assertScenarioName} from '../../../store/paths.js';
import {isRewritable} from '../../../store/layout/rewritable-files.js';
import {refuseUncommitted} from '../../../store/io/git-sides.js';
import {extractTree, mergeSides, shortCommit, trackedFiles, type MergeSides} from '../../../store/io/git-sides.js';
import {applyStage, copyTree, makeStageDirs, treeFiles, type StageDirs} from '../../../store/io/reconcile-stage.js';
import {writeReconcile} from '../../../store/kinds/common/reconcile-record.js';
import {resolveActor} from '../actor.js';
import {lockTimeout, now, openKnowledge, type StoreOptions} from '../store-options.js';
import {verify} from '../verify.js';
import {reconcileScenario} from './scenario.js';

export interface ReconcileOptions extends StoreOptions {
  /** The side whose state stands (default: ours, the branch merged into). */
  keep?: string | undefined;
  base?: string | undefined;
  ours?: string | undefined;
  theirs?: string | undefined;
  dryRun?: boolean | undefined;
}

export interface ReconcileScenarioResult {
  scenario: string;
  steps: ReconcileStep[];
  /** The record written (relative to the knowledge root), null in a dry run or when there was nothing to do. */
  record: string | null;
}

export interface ReconcileResult {
  status: 'reconciled' | 'planned' | 'nothing';
  kept: ReconcileSide;
  other: ReconcileSide;
  base: string;
  scenarios: ReconcileScenarioResult[];
  written: string[];
  removed: string[];
  /** What to run next (git's side of it). */
  next: string | null;
}

const clean = (root: string) => verify({knowledge: root}).errors.length === 0;

const nothing: ReconcileResult = {
  status: 'nothing',
  kept: {side: 'ours', commit: ''},
  other: {side: 'theirs', commit: ''},
  base: '',
  scenarios: [],
  written: [],
  removed: [],
  next: null,
};

/** The merge's sides; null when there is no merge and nothing to reconcile (verify is clean). */
function sidesOrNothing(root: string, o: ReconcileOptions): MergeSides | null {
  try {
    return mergeSides(root, {base: o.base, ours: o.ours, theirs: o.theirs});
  } catch (error) {
    if (isAutoctxError(error) && error.code === 'NOT_A_MERGE' && clean(root)) return null;
    throw error;
  }
}

function sidesOf(sides: MergeSides, keep: 'ours' | 'theirs'): {kept: ReconcileSide; other: ReconcileSide} {
  const ours: ReconcileSide = {side: 'ours', commit: sides.ours};
  const theirs: ReconcileSide = {side: 'theirs', commit: sides.theirs};
  return keep === 'ours' ? {kept: ours, other: theirs} : {kept: theirs, other: ours};
}

function extract(sides: MergeSides, kept: ReconcileSide, other: ReconcileSide, dirs: StageDirs): void {
  extractTree(sides.top, sides.prefix, sides.base, dirs.base);
  extractTree(sides.top, sides.prefix, kept.commit, dirs.kept);
  extractTree(sides.top, sides.prefix, other.commit, dirs.other);
  copyTree(dirs.kept, dirs.stage);
}

/**
 * `autoctx reconcile`: after a git merge of two clones' knowledge trees, keep one side's state and make the other
 * side's state changes again on it, each through its command's gate, in a stage outside the knowledge root; the
 * knowledge root becomes the stage only once the stage verifies, with one record per scenario of what became of
 * each change.
 */
export async function reconcile(options: ReconcileOptions): Promise<ReconcileResult> {
  const keep = options.keep ?? 'ours';
  if (keep !== 'ours' && keep !== 'theirs') fail('USAGE', `--keep takes ours or theirs, not ${JSON.stringify(keep)}`);
  const timeout = lockTimeout(options);
  if (options.scenario !== undefined) assertScenarioName(options.scenario);
  const knowledge = openKnowledge(options);
  const sides = sidesOrNothing(knowledge.root, options);
  if (sides === null) return nothing;
  const actor = resolveActor(options.actor, knowledge.root);
  const {kept, other} = sidesOf(sides, keep);
  const at = now(options);
  const empty: ReconcileResult = {
    status: 'nothing',
    kept,
    other,
    base: sides.base,
    scenarios: [],
    written: [],
    removed: [],
    next: null,
  };
  if (!sides.merging) refuseUncommitted(sides);
  const dirs = makeStageDirs();
  try {
    extract(sides, kept, other, dirs);
    const otherFiles = treeFiles(dirs.other);
    // A committed merge that verifies and kept every file the other side wrote once has nothing to reconcile (a merge
    // with `-s ours` verifies too, but lost the other side's records: it is reconciled).
    if (!sides.merging && clean(knowledge.root) && keptAllWrittenOnce(dirs, otherFiles, treeFiles(knowledge.root)))
      return empty;
    const stageRoot = KnowledgeStore.open(dirs.stage);
    const names = new Set([...KnowledgeStore.open(dirs.other).listScenarios()]);
    // --scenario: that scenario alone is reconciled and replaced; every other file stays as the work tree holds it.
    const only = options.scenario;
    if (only !== undefined) {
      const known = names.has(only) || KnowledgeStore.open(dirs.kept).listScenarios().includes(only);
      if (!known) fail('SCENARIO_NOT_FOUND', `neither side of the merge has scenario "${only}"`);
      for (const n of [...names]) if (n !== only) names.delete(n);
    }
    const results: ReconcileScenarioResult[] = [];
    let tick = 0;
    const clock = () => new Date(at.getTime() + tick++);
    for (const scenario of [...names].sort()) {
      const steps = await signedOrRefused(scenario, () =>
        reconcileScenario({
          dirs,
          scenario,
          otherFiles,
          replay: {
            knowledge: dirs.stage,
            inputs: dirs.inputs,
            scenario,
            now: clock,
            actor,
            signingKey: options.signingKey,
            allowedSigners: options.allowedSigners,
          },
        }),
      );
      results.push({scenario, steps, record: null});
    }
    if (options.dryRun) {
      verifyStage(dirs.stage);
      return {...empty, status: 'planned', scenarios: results};
    }
    for (const r of results) {
      if (r.steps.length === 0) continue;
      const record: ReconcileRecord = {
        schema_version: 1,
        scenario: r.scenario,
        reconciled_at: isoTimestamp(clock()),
        actor,
        kept,
        other,
        base: sides.base,
        steps: r.steps,
      };
      const store = stageRoot.scenario(r.scenario);
      const digest = await store.withBareLock(timeout, () => writeReconcile(store, record));
      r.record = store.guard.relative(store.paths.reconcile(digest));
    }
    // The stage with its records must verify; only then does it replace the knowledge root.
    verifyStage(dirs.stage);
    const applied = await applyLocked(knowledge, dirs.stage, timeout, only, trackedPaths(sides, dirs));
    return {
      ...empty,
      status: 'reconciled',
      scenarios: results,
      ...applied,
      next: `git add -A -- ${sides.prefix === '' ? '.' : sides.prefix} && git commit`,
    };
  } finally {
    dirs.dispose();
  }
}

/** The stage must verify, or reconcile writes nothing. */
function verifyStage(stage: string): void {
  const first = verify({knowledge: stage}).errors[0];
  if (first)
    fail(
      'RECONCILE_FAILED',
      `the tree the replay made does not verify (${first.code}: ${first.message}); nothing was written. ` +
        "Keep one side (git checkout <commit> -- <knowledge>) and make the other side's changes again by hand",
    );
}

/** The files git knows under the knowledge root: the three commits', and the index's (a merge's). */
function trackedPaths(sides: MergeSides, dirs: StageDirs): Set<string> {
  const out = new Set<string>(trackedFiles(sides));
  for (const root of [dirs.base, dirs.kept, dirs.other]) for (const rel of treeFiles(root).keys()) out.add(rel);
  return out;
}

/** True when every file the other side wrote once since the base is in the work tree with the same bytes. */
function keptAllWrittenOnce(
  dirs: StageDirs,
  otherFiles: ReadonlyMap<string, string>,
  work: ReadonlyMap<string, string>,
): boolean {
  const base = treeFiles(dirs.base);
  for (const [rel, sha] of otherFiles)
    if (base.get(rel) !== sha && !isRewritable(rel) && work.get(rel) !== sha) return false;
  return true;
}

/** Run one scenario's replay; a signed scenario without a key is refused in words that say why reconcile needs one. */
async function signedOrRefused<T>(scenario: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (!isAutoctxError(error) || error.code !== 'SIGNING_KEY_REQUIRED') throw error;
    fail(
      'SIGNING_KEY_REQUIRED',
      `scenario "${scenario}" is signed, and reconcile makes the other side's changes again as signed changes: ` +
        'give --signing-key FILE (or $AUTOCTX_SIGNING_KEY, or signing_key in the user config); nothing was written',
    );
  }
}

/**
 * Apply the stage under the lock of every scenario the work tree has (taken one after the other; a scenario only the
 * stage has is new to this tree and has no writer here yet).
 */
async function applyLocked(
  knowledge: KnowledgeStore,
  stage: string,
  timeout: number,
  only: string | undefined,
  tracked: ReadonlySet<string>,
) {
  const names = knowledge.listScenarios().filter((n) => only === undefined || n === only);
  const run = async (i: number): Promise<ReturnType<typeof applyStage>> => {
    if (i === names.length) return applyStage(stage, knowledge.guard, only === undefined ? '' : `${only}/`, tracked);
    const store = knowledge.scenario(names[i]!);
    return store.withBareLock(timeout, () => run(i + 1));
  };
  return run(0);
}

export {describeStep, shortCommit};
