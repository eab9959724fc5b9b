import type {ReconcileStep} from '../../../model/common/reconcile.js';
import {KnowledgeStore, type ScenarioStore} from '../../../store/index.js';
import path from 'node:path';
import {copyTreeFile, readTreeFile, treeFiles, type StageDirs} from '../../../store/io/reconcile-stage.js';
import {exists} from '../../../store/files/fs.js';
import {DEFAULT_LOCK_TIMEOUT_SECONDS, openScenario} from '../store-options.js';
import {isRewritable} from '../../../store/layout/rewritable-files.js';
import {putRecord} from '../../../store/kinds/promotion/candidate-record.js';
import {inScenario} from './other-side-more.js';
import {readOtherSide, sourceOf, type CandidateTake, type SideEvent} from './other-side.js';
import {replayEvent, type ReplayContext} from './replay.js';

export interface ScenarioJob {
  dirs: StageDirs;
  scenario: string;
  /** The other side's files (relative to the knowledge root) and their SHA-256. */
  otherFiles: ReadonlyMap<string, string>;
  replay: ReplayContext;
}

/**
 * The other side's files whose changes its state changes stand for: a replayed promotion, rejection, rollback or
 * rollover writes its own, and a candidate's evaluation is taken with its record. They are never copied as they are.
 */
const MADE_BY_STATE_CHANGES: readonly RegExp[] = [
  /^context_bundles\/active\.json$/,
  /^(playbook|hints)\.md$/,
  /^context_bundles\/candidates\//,
  // A bundle comes with its candidate (taken below), or is made by the replayed command (a rollover's baseline).
  /^context_bundles\/bundles\//,
  /^negative_result_ledgers\//,
  /^context_bundles\/(promotions|rollbacks|rollovers|foreign_moves|reconciles)\//,
  /^context_bundles\/record_histories\.json$/,
  /^context_bundles\/signing\/chain\//,
  // Release receipts and registries (made again by transitions), the curation and handoffs (by their commands).
  /^context_bundles\/releases\/(receipts|registry)\//,
  /^context_bundles\/bootstrap\//,
];

/** The signers and their history: changed only by `signing`, which reconcile does not make again. */
const SIGNING = /^(allowed_signers|context_bundles\/signing\/(start\.json|signers\/.*))$/;

function scenarioFiles(all: ReadonlyMap<string, string>, scenario: string): Map<string, string> {
  const prefix = `${scenario}/`;
  const out = new Map<string, string>();
  for (const [rel, sha] of all) if (rel.startsWith(prefix)) out.set(rel.slice(prefix.length), sha);
  return out;
}

function open(root: string, scenario: string): ScenarioStore | null {
  const k = KnowledgeStore.open(root);
  return k.listScenarios().includes(scenario) ? k.scenario(scenario) : null;
}

function step(kind: ReconcileStep['kind'], subject: string, rest: Partial<ReconcileStep>): ReconcileStep {
  return {
    kind,
    subject,
    at: '',
    actor: null,
    rationale: null,
    outcome: 'kept',
    reason: null,
    source: [],
    made: [],
    ...rest,
  };
}

/**
 * Take a candidate the other side proposed or evaluated, as it stood before any decision: its bundle, its evaluation's
 * files and its record history up to then, written through the stage's writer as one step (in a signed scenario a
 * signed, chained step, as the evaluation was on the other side).
 */
async function takeCandidate(job: ScenarioJob, take: CandidateTake, files: Map<string, string>) {
  const source = sourceOf([...take.entries, ...take.files], files);
  const at = take.at;
  if (take.superseded)
    return step('candidate', take.digest, {
      at,
      outcome: 'superseded',
      reason: "both sides changed this candidate's evaluation; the kept side's stands (run screen or confirm again)",
      source,
    });
  if (take.record === null) return null;
  const record = take.record;
  const stage = openScenario(job.replay);
  const bundle = inScenario(stage, stage.paths.bundle(take.digest));
  await stage.withLock(DEFAULT_LOCK_TIMEOUT_SECONDS, () => {
    for (const rel of [bundle, ...take.files, ...take.entries]) {
      const target = path.join(stage.paths.dir, ...rel.split('/'));
      if (rel === bundle && exists(target)) continue;
      stage.writer.replace(target, readTreeFile(path.join(job.dirs.other, job.scenario), rel));
    }
    putRecord(stage, record);
  });
  return step('candidate', take.digest, {
    at,
    outcome: 'kept',
    reason: `taken at "${record.lifecycle}"`,
    source,
    made: [inScenario(stage, stage.paths.record(take.digest))],
  });
}

function subjectOf(e: SideEvent): string {
  switch (e.kind) {
    case 'promotion':
    case 'rejection':
      return e.candidate;
    case 'transition':
      return e.action === 'runnable' ? `${e.scope} runnable set` : `${e.scope} ${e.version} → ${e.to}`;
    case 'curation':
      return `${e.cause} ${e.subject}`;
    case 'handoff':
      return e.id;
    default:
      return e.from;
  }
}

/** Keep the kept side's state of one scenario and make the other side's changes again on it, in the stage. */
export async function reconcileScenario(job: ScenarioJob): Promise<ReconcileStep[]> {
  const {dirs, scenario} = job;
  const files = scenarioFiles(job.otherFiles, scenario);
  const base = open(dirs.base, scenario);
  const kept = open(dirs.kept, scenario);
  const other = open(dirs.other, scenario)!;
  if (!kept) {
    if (base) return []; // the kept side removed it
    for (const rel of files.keys()) copyTreeFile(dirs.other, dirs.stage, `${scenario}/${rel}`);
    return [step('not-replayed', `scenario ${scenario}`, {reason: 'new on the other side: taken as it is'})];
  }
  const baseFiles = scenarioFiles(treeFiles(dirs.base), scenario);
  const keptFiles = scenarioFiles(treeFiles(dirs.kept), scenario);
  const steps: ReconcileStep[] = [];
  for (const [rel, sha] of files) {
    if (baseFiles.get(rel) === sha || keptFiles.get(rel) === sha) continue;
    if (MADE_BY_STATE_CHANGES.some((r) => r.test(rel))) continue;
    const signing = SIGNING.test(rel);
    // Content only the other side has or changed (a bundle's files, a release's descriptor, a campaign's ledger):
    // taken as it is.
    const keptUnchanged = keptFiles.get(rel) === baseFiles.get(rel);
    if (!signing && keptUnchanged && (!keptFiles.has(rel) || isRewritable(`${scenario}/${rel}`))) {
      copyTreeFile(dirs.other, dirs.stage, `${scenario}/${rel}`);
      continue;
    }
    steps.push(
      step('not-replayed', rel, {
        outcome: 'superseded',
        reason: signing
          ? "a change of the signers is made again by hand (autoctx signing signers); the kept side's stands"
          : "both sides changed it and no command makes this change again; the kept side's stands",
        source: sourceOf([rel], files),
      }),
    );
  }
  const side = readOtherSide(base, kept, other, files);
  for (const take of side.candidates) {
    const s = await takeCandidate(job, take, files);
    if (s) steps.push(s);
  }
  const stageDir = path.join(dirs.stage, scenario);
  for (const e of side.events) {
    const replayed = await replayEvent(job.replay, e);
    // A step names only files its replay left in the stage (verify then holds the record to them).
    const outcome = {...replayed, made: replayed.made.filter((rel) => exists(path.join(stageDir, ...rel.split('/'))))};
    steps.push(
      step(e.kind, subjectOf(e), {
        at: e.at,
        actor: e.kind === 'rollback' || e.kind === 'transition' ? e.actor : null,
        rationale: 'rationale' in e ? e.rationale : null,
        source: sourceOf(e.files, files),
        ...outcome,
      }),
    );
  }
  // Every entry of a history the other side wrote is told: made again, refused, or, when no step stands for it (its
  // history did not read there, or no command makes it again), recorded as not made again. Nothing is dropped unsaid.
  const cited = new Set(steps.flatMap((st) => st.source.map((src) => src.path)));
  for (const [rel, sha] of files)
    if (baseFiles.get(rel) !== sha && keptFiles.get(rel) !== sha && isEntry(rel) && !cited.has(rel))
      steps.push(
        step('not-replayed', rel, {
          outcome: 'superseded',
          reason: 'not made again: no change of the other side that reconcile makes again stands for it',
          source: sourceOf([rel], files),
        }),
      );
  return steps;
}

/** A record of a state change (a signature goes with its record). */
const isEntry = (rel: string) => HISTORY_ENTRY.test(rel) && !rel.endsWith('.sig');

/** The other side's records of its state changes, each of which a step must account for. */
const HISTORY_ENTRY = new RegExp(
  String.raw`^context_bundles/(promotions/|rollovers/|rollbacks/RBX-[^/]+\.json$|releases/receipts/|` +
    String.raw`bootstrap/(curation_history|handoffs)/)|/negative_result\.json$`,
);
