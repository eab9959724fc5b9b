import type {RecordHistoryEntry} from '../../../model/promotion/record-history.js';
import type {SourceFile} from '../../../model/common/reconcile.js';
import {GLOBAL_SCOPE} from '../../../model/release/release.js';
import type {ScenarioStore} from '../../../store/index.js';
import {listCandidateDigests} from '../../../store/kinds/promotion/candidate-record.js';
import {
  listPromotionIds,
  listRollbackIds,
  listRolloverIds,
  readPromotion,
  readRollback,
  readRollover,
} from '../../../store/kinds/promotion/history.js';
import {historyEntryFile, historyShape} from '../../../store/kinds/promotion/record-history.js';
import {listExecutionKeys, readExecution} from '../../../store/kinds/rollback/rollback-execution.js';
import {
  deliveryEvents,
  inScenario,
  quiet,
  transitionEvents,
  type CurationEvent,
  type HandoffEvent,
  type TransitionEvent,
} from './other-side-more.js';

/** One state change the other side made since the base, to be made again on the kept side. */
export type SideEvent =
  | {kind: 'promotion'; at: string; candidate: string; rationale: string; files: string[]}
  | {kind: 'rejection'; at: string; candidate: string; rationale: string; files: string[]}
  | {
      kind: 'rollback';
      at: string;
      from: string;
      scope: string;
      rationale: string;
      actor: string | null;
      emergency: boolean;
      refused: boolean;
      files: string[];
    }
  | {kind: 'rollover'; at: string; from: string; epoch: string; files: string[]}
  | TransitionEvent
  | CurationEvent
  | HandoffEvent;

/**
 * A candidate the other side proposed or evaluated since the base, as it stood before any decision about it: its
 * record (the last entry before a rejection, a pointer move or a terminal marker), the history entries up to it, and
 * the candidate's other files that evaluation writes.
 */
export interface CandidateTake {
  digest: string;
  at: string;
  /** The record to write (null: the kept side has every change the other made before a decision). */
  record: RecordHistoryEntry['record'] | null;
  entries: string[];
  files: string[];
  /** The kept side changed the candidate too: its changes stand. */
  superseded: boolean;
}

/** The other side's view: what it did that the base had not, per kind. */
export interface OtherSide {
  events: SideEvent[];
  candidates: CandidateTake[];
}

const EVALUATION_CAUSES = new Set(['propose', 'evaluate', 'migrate', 'adopt', 'repair', 'init']);
/** The files of a candidate's folder a decision writes (made again by the replayed decision, never copied). */
const DECISION_FILES = new Set([
  'record.json',
  'negative_result.json',
  'causal_attribution.json',
  'stale_terminalization.json',
  'promotion_guardrails.json',
]);

function lineOf(
  store: ScenarioStore | null,
  digest: string,
): {name: string; digest: string; value: RecordHistoryEntry}[] {
  if (!store) return [];
  return quiet(() => historyShape(store, digest).line, []);
}

function candidateTakes(
  base: ScenarioStore | null,
  kept: ScenarioStore,
  other: ScenarioStore,
  candidateFiles: (d: string) => string[],
): {takes: CandidateTake[]; rejections: SideEvent[]} {
  const takes: CandidateTake[] = [];
  const rejections: SideEvent[] = [];
  for (const digest of quiet(() => listCandidateDigests(other), [] as string[])) {
    const otherLine = lineOf(other, digest);
    const baseLine = lineOf(base, digest);
    if (otherLine.length <= baseLine.length) continue;
    if (baseLine.some((e, i) => otherLine[i]?.digest !== e.digest)) continue;
    const added = otherLine.slice(baseLine.length);
    const pre: typeof added = [];
    for (const e of added) {
      if (!EVALUATION_CAUSES.has(e.value.cause) || e.value.record.lifecycle === 'rejected') break;
      pre.push(e);
    }
    const entryRel = (e: (typeof added)[number]) => inScenario(other, historyEntryFile(other, e.value));
    // A rejection among the other side's changes (by reject, or a promotion refused as stale).
    for (let i = 0; i < added.length; i++) {
      const e = added[i]!;
      const before = i === 0 ? baseLine.at(-1)?.value.record : added[i - 1]!.value.record;
      if (e.value.record.lifecycle === 'rejected' && before?.lifecycle !== 'rejected') {
        rejections.push({
          kind: 'rejection',
          at: e.value.record.updated_at,
          candidate: digest,
          rationale: e.value.record.rationale,
          files: [entryRel(e), inScenario(other, other.paths.negativeResult(digest))],
        });
        break;
      }
    }
    if (pre.length === 0) continue;
    const keptLine = lineOf(kept, digest);
    const keptSame = keptLine.length === baseLine.length && baseLine.every((e, i) => keptLine[i]?.digest === e.digest);
    const keptHas = pre.every((e) => keptLine.some((k) => k.digest === e.digest));
    takes.push({
      digest,
      at: pre[0]!.value.record.updated_at,
      record: keptHas ? null : pre.at(-1)!.value.record,
      entries: pre.map(entryRel),
      files: candidateFiles(digest).filter(
        (f) => !DECISION_FILES.has(f.split('/').pop()!) && !f.includes('/record_history/'),
      ),
      superseded: !keptSame && !keptHas,
    });
  }
  return {takes, rejections};
}

/** What the other side did since the base (`base` null: the scenario is new since the base). */
export function readOtherSide(
  base: ScenarioStore | null,
  kept: ScenarioStore,
  other: ScenarioStore,
  otherFiles: ReadonlyMap<string, string>,
): OtherSide {
  const had = (list: (s: ScenarioStore) => string[]) => new Set(base ? quiet(() => list(base), [] as string[]) : []);
  const events: SideEvent[] = [];
  const basePromotions = had(listPromotionIds);
  for (const id of quiet(() => listPromotionIds(other), [] as string[])) {
    if (basePromotions.has(id)) continue;
    const p = quiet(() => readPromotion(other, id), null);
    if (p)
      events.push({
        kind: 'promotion',
        at: p.promoted_at,
        candidate: p.candidate_digest,
        rationale: p.rationale,
        files: [inScenario(other, other.paths.promotion(id))],
      });
  }
  const baseRollbacks = had(listRollbackIds);
  for (const id of quiet(() => listRollbackIds(other), [] as string[])) {
    if (baseRollbacks.has(id)) continue;
    const r = quiet(() => readRollback(other, id), null);
    if (r)
      events.push({
        kind: 'rollback',
        at: r.rolled_back_at,
        from: r.from_digest,
        scope: GLOBAL_SCOPE,
        rationale: r.rationale,
        actor: null,
        emergency: false,
        refused: false,
        files: [inScenario(other, other.paths.rollback(id))],
      });
  }
  const baseExecutions = had(listExecutionKeys);
  for (const key of quiet(() => listExecutionKeys(other), [] as string[])) {
    if (baseExecutions.has(key)) continue;
    const r = quiet(() => readExecution(other, key), null);
    if (r && r.from_digest !== null)
      events.push({
        kind: 'rollback',
        at: r.executed_at,
        from: r.from_digest,
        scope: r.scope,
        rationale: r.rationale,
        actor: r.actor,
        emergency: r.emergency,
        refused: r.status === 'REFUSED',
        files: [inScenario(other, other.paths.rollbackExecution(key))],
      });
  }
  const baseRollovers = had(listRolloverIds);
  for (const id of quiet(() => listRolloverIds(other), [] as string[])) {
    if (baseRollovers.has(id)) continue;
    const r = quiet(() => readRollover(other, id), null);
    if (r)
      events.push({
        kind: 'rollover',
        at: r.rolled_over_at,
        from: r.from_digest,
        epoch: r.evaluator_epoch,
        files: [inScenario(other, other.paths.rollover(id))],
      });
  }
  const prefix = (d: string) => `${inScenario(other, other.paths.candidateDir(d))}/`;
  const filesOf = (d: string) => [...otherFiles.keys()].filter((f) => f.startsWith(prefix(d)));
  const {takes, rejections} = candidateTakes(base, kept, other, filesOf);
  events.push(...rejections, ...transitionEvents(base, other), ...deliveryEvents(base, other));
  events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return {events, candidates: takes.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))};
}

/** The other side's files a step stands for, with their digests. */
export function sourceOf(files: readonly string[], otherFiles: ReadonlyMap<string, string>): SourceFile[] {
  return files.flatMap((path) => {
    const sha256 = otherFiles.get(path);
    return sha256 ? [{path, sha256}] : [];
  });
}
