import {GLOBAL_SCOPE} from '../../../model/release/release.js';
import {readActive} from '../../../store/kinds/promotion/active-pointer.js';
import {readRecord} from '../../../store/kinds/promotion/candidate-record.js';
import {openScenario} from '../store-options.js';
import {promote} from '../../promotion/promote.js';
import {reject} from '../../promotion/reject.js';
import {rollback} from '../../rollback/rollback.js';
import {rolloverEpoch} from '../../rollback/epoch.js';
import type {SideEvent} from './other-side.js';
import {gate, type Outcome, type ReplayContext} from './replay-gate.js';

export type {ReplayContext} from './replay-gate.js';
import {replayCuration, replayHandoff, replayTransition} from './replay-more.js';

const short = (d: string) => d.slice(0, 12);

function scenarioRel(knowledgeRel: string): string {
  return knowledgeRel.split('/').slice(1).join('/');
}

/** What serves in the stage's global scope now (null: nothing). */
function serving(ctx: ReplayContext): string | null {
  return readActive(openScenario(ctx))?.bundle_digest ?? null;
}

function paths(ctx: ReplayContext) {
  const store = openScenario(ctx);
  return {
    store,
    rel: (file: string) => scenarioRel(store.guard.relative(file)),
  };
}

async function replayPromotion(ctx: ReplayContext, e: Extract<SideEvent, {kind: 'promotion'}>): Promise<Outcome> {
  if (serving(ctx) === e.candidate)
    return {outcome: 'already', reason: `${short(e.candidate)} already serves here`, made: []};
  return gate(
    async () => {
      const r = await promote({...ctx, candidate: e.candidate, rationale: e.rationale});
      const {store, rel} = paths(ctx);
      if (r.status === 'promoted')
        return {
          outcome: 'applied',
          reason: null,
          made: r.promotion_id ? [rel(store.paths.promotion(r.promotion_id))] : [],
        };
      return {outcome: 'stale', reason: r.reason, made: [rel(store.paths.negativeResult(e.candidate))]};
    },
    () => {
      const {store, rel} = paths(ctx);
      return {outcome: 'stale', reason: null, made: [rel(store.paths.negativeResult(e.candidate))]};
    },
  );
}

async function replayRejection(ctx: ReplayContext, e: Extract<SideEvent, {kind: 'rejection'}>): Promise<Outcome> {
  const {store, rel} = paths(ctx);
  const record = readRecord(store, e.candidate);
  if (record?.lifecycle === 'rejected')
    return {outcome: 'already', reason: `${short(e.candidate)} is rejected here too`, made: []};
  const made: string[] = [];
  let why: string | null = null;
  if (serving(ctx) === e.candidate) {
    // A rejection beats a promotion of the same bundle: it stops serving here, by a rollback (a bundle that served is
    // never rejected, so the rollback is what the rejection becomes).
    const back = await gate(async () => {
      const r = await rollback({
        ...ctx,
        rationale: `rejected on the other side of a merge: ${e.rationale}`,
        expectActive: e.candidate,
      });
      const file = rel(store.paths.rollbackExecution(r.execution_key));
      return r.status === 'rolled_back'
        ? {outcome: 'applied', reason: null, made: [file]}
        : {
            outcome: 'refused',
            reason: r.conditions
              .filter((c) => !c.passed)
              .map((c) => c.detail)
              .join('; '),
            made: [file],
          };
    });
    if (back.outcome !== 'applied')
      return {...back, reason: `it serves here and its rollback was refused: ${back.reason}`};
    made.push(...back.made);
    why = `it served here: rolled back (a bundle that served is never rejected)`;
  }
  const rec = readRecord(store, e.candidate);
  if (rec && (rec.lifecycle === 'active' || rec.lifecycle === 'superseded'))
    return {outcome: made.length > 0 ? 'applied' : 'refused', reason: why ?? `${short(e.candidate)} served here`, made};
  const r = await gate(async () => {
    await reject({...ctx, candidate: e.candidate, rationale: e.rationale});
    return {outcome: 'applied', reason: null, made: [rel(store.paths.negativeResult(e.candidate))]};
  });
  return {...r, made: [...made, ...r.made], reason: r.reason ?? why};
}

async function replayRollback(ctx: ReplayContext, e: Extract<SideEvent, {kind: 'rollback'}>): Promise<Outcome> {
  if (e.refused) return {outcome: 'refused', reason: 'refused on the other side too; nothing to make again', made: []};
  if (e.scope !== GLOBAL_SCOPE)
    return {
      outcome: 'refused',
      reason: `a rollback of scope "${e.scope}" is made again by hand (autoctx rollback --scope)`,
      made: [],
    };
  const now = serving(ctx);
  if (now !== e.from)
    return {
      outcome: 'refused',
      reason: `it rolled back ${short(e.from)}, which no longer serves here (${now ? short(now) : 'nothing'} serves)`,
      made: [],
    };
  return gate(async () => {
    const r = await rollback({
      ...ctx,
      rationale: e.rationale,
      emergency: e.emergency,
      expectActive: e.from,
      // Made again by the one who reconciles (whose key signs it); the other side's actor is in the record.
      actor: ctx.actor,
    });
    const {store, rel} = paths(ctx);
    const file = rel(store.paths.rollbackExecution(r.execution_key));
    return r.status === 'rolled_back'
      ? {outcome: 'applied', reason: null, made: [file]}
      : {
          outcome: 'refused',
          reason: r.conditions
            .filter((c) => !c.passed)
            .map((c) => c.detail)
            .join('; '),
          made: [file],
        };
  });
}

async function replayRollover(ctx: ReplayContext, e: Extract<SideEvent, {kind: 'rollover'}>): Promise<Outcome> {
  const active = readActive(openScenario(ctx));
  if (active?.evaluator_epoch === e.epoch)
    return {outcome: 'already', reason: `the epoch is ${e.epoch} here too`, made: []};
  if (active?.bundle_digest !== e.from)
    return {
      outcome: 'refused',
      reason:
        `it rolled ${short(e.from)} over, which no longer serves here ` +
        `(${active ? short(active.bundle_digest) : 'nothing'} serves): ` +
        `run autoctx epoch rollover again if the epoch still changes`,
      made: [],
    };
  return gate(async () => {
    await rolloverEpoch({...ctx, evaluatorEpoch: e.epoch});
    return {outcome: 'applied', reason: null, made: []};
  });
}

/** Make one of the other side's state changes again on the stage, through its command's gate. */
export function replayEvent(ctx: ReplayContext, e: SideEvent): Promise<Outcome> {
  switch (e.kind) {
    case 'promotion':
      return replayPromotion(ctx, e);
    case 'rejection':
      return replayRejection(ctx, e);
    case 'rollback':
      return replayRollback(ctx, e);
    case 'rollover':
      return replayRollover(ctx, e);
    case 'transition':
      return replayTransition(ctx, e);
    case 'curation':
      return replayCuration(ctx, e);
    case 'handoff':
      return replayHandoff(ctx, e, ctx.inputs);
  }
}
