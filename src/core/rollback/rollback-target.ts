import {GLOBAL_SCOPE, versionKey} from '../../model/release/release.js';
import type {ActivePointer} from '../../model/promotion/records.js';
import type {Condition} from '../../model/rollback/rollback-execution.js';
import type {ScenarioStore} from '../../store/index.js';
import {pointerHistory} from '../../store/kinds/promotion/pointer-moves.js';
import {readDescriptor} from '../../store/kinds/release/release-descriptor.js';
import type {ScopeView} from '../release/registry-view.js';
import {madeActive} from '../../model/promotion/served.js';
import {condition, type Facts, type Target} from './rollback-conditions.js';

/** Where a rollback goes back to: the facts of the global scope (active.json) and of another scope (its registry). */

/** With --to: the version must be one the ACTIVE release's descriptor declares for this scope. */
function declaredTarget(view: ScopeView, to: string, fromVersion: string | null, store: ScenarioStore): Target {
  const d = readDescriptor(store, to)!;
  const from =
    fromVersion === null
      ? null
      : (view.descriptors.find((x) => versionKey(x.version) === versionKey(fromVersion)) ?? null);
  let declared: Condition;
  if (!from)
    declared = condition(
      'TARGET_DECLARED',
      false,
      `the ACTIVE bundle is no named release, so no descriptor declares ${d.version}`,
    );
  else if (!from.rollback_targets.some((t) => versionKey(t) === versionKey(to)))
    declared = condition(
      'TARGET_DECLARED',
      false,
      `${from.version} declares ` +
        `${from.rollback_targets.length ? from.rollback_targets.join(', ') : 'no rollback target'}, not ` +
        `${d.version}`,
    );
  else if (from.rollback_scope !== view.state.scope)
    declared = condition(
      'TARGET_DECLARED',
      false,
      `${from.version} declares its rollback targets for scope ${from.rollback_scope}, not ${view.state.scope}`,
    );
  else declared = condition('TARGET_DECLARED', true, `${from.version} declares ${d.version}`);
  return {version: d.version, digest: d.bundle_digest, declared};
}

/**
 * A target that is what the scope serves now is no rollback: it has served (it serves), but nothing declares it as
 * somewhere to go back to.
 */
function notServing(target: Target, serving: string | null, scope: string): Target {
  if (target.digest === null || target.digest !== serving) return target;
  const label = target.version ?? `the unnamed bundle ${target.digest.slice(0, 12)}`;
  return {
    ...target,
    declared: condition(
      'TARGET_DECLARED',
      false,
      `${label} is what scope ${scope} serves now: a rollback restores another release`,
    ),
  };
}

function nameOf(view: ScopeView, digest: string | null): string | null {
  return digest === null ? null : (view.descriptors.find((x) => x.bundle_digest === digest)?.version ?? null);
}

export function decideGlobal(
  store: ScenarioStore,
  view: ScopeView,
  active: ActivePointer,
  to: string | undefined,
): Facts {
  const chain = pointerHistory(store, active).chain;
  const fromVersion = nameOf(view, active.bundle_digest);
  let target: Target;
  if (to !== undefined) target = declaredTarget(view, to, fromVersion, store);
  else if (active.rollback_target_digest === null)
    target = {
      version: null,
      digest: null,
      declared: condition(
        'TARGET_DECLARED',
        false,
        `active.json records no rollback target for ${active.bundle_digest.slice(0, 12)}`,
      ),
    };
  else {
    const digest = active.rollback_target_digest;
    target = {
      version: nameOf(view, digest),
      digest,
      declared: condition('TARGET_DECLARED', true, `active.json records ${digest.slice(0, 12)} as the rollback target`),
    };
  }
  return {
    view,
    fromVersion,
    fromDigest: active.bundle_digest,
    fromOk: condition(
      'FROM_IS_ACTIVE',
      true,
      `${fromVersion ?? 'the unnamed bundle'} ${active.bundle_digest.slice(0, 12)} is what active.json serves`,
    ),
    target: notServing(target, active.bundle_digest, view.state.scope),
    chain,
  };
}

/** A scope's own ACTIVE release, and the release its ACTIVE receipt deprecated (its recorded rollback target). */
export function decideScoped(store: ScenarioStore, view: ScopeView, to: string | undefined): Facts {
  const own = Object.values(view.state.registry.releases).find((r) => r.state === 'ACTIVE') ?? null;
  const from = own ? (view.descriptors.find((x) => versionKey(x.version) === versionKey(own.version)) ?? null) : null;
  const scope = view.state.scope;
  const fromOk = from
    ? condition('FROM_IS_ACTIVE', true, `${from.version} is ACTIVE in scope ${scope}`)
    : condition(
        'FROM_IS_ACTIVE',
        false,
        `scope ${scope} has no ACTIVE release of its own (it serves the global ACTIVE; roll that back in scope global)`,
      );
  let target: Target;
  if (to !== undefined) target = declaredTarget(view, to, from?.version ?? null, store);
  else {
    const made = from ? [...view.state.receipts].reverse().find((r) => madeActive(r, from.version)) : undefined;
    const previous = made?.deprecated_versions[0];
    const d =
      previous !== undefined ? view.descriptors.find((x) => versionKey(x.version) === versionKey(previous)) : undefined;
    target = d
      ? {
          version: d.version,
          digest: d.bundle_digest,
          declared: condition(
            'TARGET_DECLARED',
            true,
            `receipt ${made!.seq} made ${from!.version} ACTIVE in place of ${d.version}`,
          ),
        }
      : {
          version: null,
          digest: null,
          declared: condition(
            'TARGET_DECLARED',
            false,
            from
              ? `no receipt records what ${from.version} replaced in scope ${scope}`
              : `scope ${scope} has no ACTIVE release to roll back`,
          ),
        };
  }
  return {
    view,
    fromVersion: from?.version ?? null,
    fromDigest: from?.bundle_digest ?? null,
    fromOk,
    target: notServing(target, from?.bundle_digest ?? null, scope),
    chain: [],
  };
}
