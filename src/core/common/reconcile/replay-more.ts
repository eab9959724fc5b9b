import {writeStageInput} from '../../../store/io/reconcile-stage.js';
import {grantAdd, grantRm, handoffWrite, referenceAdd, referenceRm, tagAdd, tagRm} from '../../delivery/curation.js';
import {releaseRunnable} from '../../release/release-runnable.js';
import {releaseTransition} from '../../release/release-transition.js';
import {readDescriptor} from '../../../store/kinds/release/release-descriptor.js';
import {openScenario} from '../store-options.js';
import type {CurationEvent, HandoffEvent, TransitionEvent} from './other-side-more.js';
import {gate, type Outcome, type ReplayContext} from './replay-gate.js';

/** A release transition (or runnable-set change) made again through the release gate: applied, or blocked. */
export function replayTransition(ctx: ReplayContext, e: TransitionEvent): Promise<Outcome> {
  if (!e.applied)
    return Promise.resolve({
      outcome: 'refused',
      reason: 'blocked on the other side too; nothing to make again',
      made: [],
    });
  return gate(async () => {
    if (e.action === 'runnable') {
      const set = e.runnable;
      await releaseRunnable({
        ...ctx,
        scope: e.scope,
        rationale: e.rationale,
        actor: ctx.actor,
        ...(set?.versions === null || !set ? {all: true} : {versions: set.versions}),
        ...(set?.default_version ? {defaultVersion: set.default_version} : {}),
      });
      return {outcome: 'applied', reason: null, made: []};
    }
    // The version must name the same bundle here: a name both sides gave to different bundles is not the one moved.
    const here = readDescriptor(openScenario(ctx), e.version!)?.bundle_digest ?? null;
    if (e.bundle !== null && here !== null && here !== e.bundle)
      return {
        outcome: 'refused',
        reason:
          `${e.version} names bundle ${here.slice(0, 12)} here, not ` + `${e.bundle.slice(0, 12)} as on the other side`,
        made: [],
      };
    const r = await releaseTransition({
      ...ctx,
      version: e.version!,
      to: e.to!,
      scope: e.scope,
      rationale: e.rationale,
      actor: ctx.actor,
      ...(e.canary && e.to === 'CANARY'
        ? {
            ...(e.canary.basis_points !== null ? {canaryBasisPoints: e.canary.basis_points} : {}),
            canaryTenants: e.canary.tenants.length > 0 ? e.canary.tenants : undefined,
            canaryResourceFamilies: e.canary.resource_families.length > 0 ? e.canary.resource_families : undefined,
            canarySalt: e.canary.salt,
          }
        : {}),
      ...(e.shadow && e.to === 'SHADOW'
        ? {shadowBasisPoints: e.shadow.basis_points, shadowDailyCap: e.shadow.daily_cap}
        : {}),
    });
    if (r.status === 'applied') return {outcome: 'applied', reason: null, made: []};
    return {outcome: 'refused', reason: r.blockers.map((b) => `${b.code}: ${b.detail}`).join('; '), made: []};
  });
}

const CURATION = {
  'tag-add': (o: ReplayContext, s: string) => tagAdd({...o, digest: s}),
  'tag-rm': (o: ReplayContext, s: string) => tagRm({...o, digest: s}),
  'reference-add': (o: ReplayContext, s: string) => referenceAdd({...o, name: s}),
  'reference-rm': (o: ReplayContext, s: string) => referenceRm({...o, name: s}),
  'grant-add': (o: ReplayContext, s: string) => grantAdd({...o, name: s}),
  'grant-rm': (o: ReplayContext, s: string) => grantRm({...o, name: s}),
} as const;

/** A curation change made again: a tag, reference or grant added or removed (a repeat is refused as such). */
export function replayCuration(ctx: ReplayContext, e: CurationEvent): Promise<Outcome> {
  return gate(async () => {
    await CURATION[e.cause](ctx, e.subject);
    return {outcome: 'applied', reason: null, made: []};
  });
}

/** A handoff revision's content written again: the next revision on the kept side (the same content adds nothing). */
export function replayHandoff(ctx: ReplayContext, e: HandoffEvent, inputs: string): Promise<Outcome> {
  return gate(async () => {
    const from = writeStageInput(inputs, `handoff-${e.id}.json`, e.content);
    const r = await handoffWrite({...ctx, id: e.id, from});
    return r.status === 'written'
      ? {outcome: 'applied', reason: `revision ${r.revision} here`, made: []}
      : {outcome: 'already', reason: `revision ${r.revision} here holds the same content`, made: []};
  });
}
