import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../errors.js';
import {isRunnable, type ReleaseDescriptor} from '../../model/release/release.js';
import type {Condition, ConditionCode} from '../../model/rollback/rollback-execution.js';
import type {ScenarioStore} from '../../store/index.js';
import {readRelease, stateIn, type ScopeView} from '../release/registry-view.js';
import {hasServed} from '../../model/promotion/served.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';
import {rejectionOf} from '../release/serving.js';

/** The conditions a rollback checks: what it rolls back from, where to, and the target's own conditions. */

export function condition(code: ConditionCode, passed: boolean, detail: string): Condition {
  return {code, passed, detail};
}

export interface Target {
  version: string | null;
  digest: string | null;
  declared: Condition;
}

export interface Facts {
  view: ScopeView;
  fromVersion: string | null;
  fromDigest: string | null;
  fromOk: Condition;
  target: Target;
  /** The global pointer's history (empty outside the global scope, where the receipts tell what served). */
  chain: readonly {to: string}[];
}

/** The target's own conditions: served, not retired, not rejected, verifies, runnable. */
export function targetConditions(store: ScenarioStore, f: Facts): {conditions: Condition[]; epoch: string | null} {
  const {view, target} = f;
  if (target.digest === null) {
    const none = 'there is no target to check';
    return {
      conditions: [
        condition('TARGET_SERVED', false, none),
        condition('TARGET_NOT_RETIRED', false, none),
        condition('TARGET_NOT_REJECTED', false, none),
        condition('TARGET_VERIFIES', false, none),
        condition('TARGET_RUNNABLE', false, none),
      ],
      epoch: null,
    };
  }
  const label = target.version ?? `the unnamed bundle ${target.digest.slice(0, 12)}`;
  const served = hasServed(
    view.state.scope,
    {version: target.version, bundle_digest: target.digest},
    {chain: f.chain, receipts: view.state.receipts},
  );
  const out: Condition[] = [
    condition(
      'TARGET_SERVED',
      served,
      served
        ? `${label} has served in scope ${view.state.scope}`
        : `${label} has never served in scope ${view.state.scope}`,
    ),
  ];
  let descriptor: ReleaseDescriptor | null = null;
  let verifies = true;
  let why = `bundle ${target.digest.slice(0, 12)} verifies`;
  let epoch: string | null = null;
  try {
    const bundle = readBundle(store, target.digest);
    if (!bundle) fail('DIGEST_NOT_FOUND', `bundle ${target.digest} is missing from bundles/`);
    epoch = bundle.evaluator_epoch;
    if (target.version !== null) {
      descriptor = readRelease(store, target.version);
      why += ` and so does its descriptor`;
    }
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    verifies = false;
    why = (error as Error).message;
  }
  const state = descriptor ? stateIn(view, descriptor) : null;
  out.push(
    condition(
      'TARGET_NOT_RETIRED',
      state !== 'RETIRED',
      state === null ? `${label} has no release state` : `${label} is ${state}`,
    ),
  );
  // A rejected bundle never serves: a rollback never makes one a scope's ACTIVE (the one definition of rejected).
  const rejected = rejectionOf(store, target.digest);
  out.push(condition('TARGET_NOT_REJECTED', rejected === null, rejected ?? `${label} is not rejected`));
  out.push(condition('TARGET_VERIFIES', verifies, why));
  const runnable =
    target.version !== null
      ? isRunnable(view.state.registry, target.version)
      : view.state.registry.runnable.versions === null;
  out.push(
    condition(
      'TARGET_RUNNABLE',
      runnable,
      runnable
        ? `${label} is runnable in scope ${view.state.scope}`
        : `${label} is not in the runnable set of scope ${view.state.scope}`,
    ),
  );
  return {conditions: out, epoch};
}
