/** `autoctx release runnable`: which versions a deployment can run, and its default. */
import {requireUndiverged} from '../promotion/pointer-move.js';
import {jsonEqual} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {assertVersionName, normalizeScope, versionKey, type Registry} from '../../model/release/release.js';
import {createReceipt} from '../../store/kinds/release/release-receipt.js';
import {registryState, settleRegistry, swapRegistry} from '../../store/kinds/release/release-registry.js';
import {prepareSigning, signingInputs} from '../signing/signing.js';
import {resolveActor} from '../common/actor.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {nextReceipt, readRelease} from './registry-view.js';
import {parseExpect, staleIfMoved} from './release-input.js';

export interface RunnableOptions extends StoreOptions {
  signingKey?: string | undefined;
  allowedSigners?: string | undefined;
  versions?: string[] | undefined;
  all?: boolean | undefined;
  defaultVersion?: string | undefined;
  rationale: string;
  scope?: string | undefined;
  expectRegistry?: string | undefined;
  actor?: string | undefined;
}

export interface RunnableResult {
  status: 'applied';
  scenario: string;
  scope: string;
  runnable: Registry['runnable'];
  receipt_seq: number;
  registry_before: string | null;
  registry_after: string;
}

/**
 * `autoctx release runnable`: which versions this deployment can run (all, or a list) and its default; a receipt like
 * any registry change.
 */
export async function releaseRunnable(options: RunnableOptions): Promise<RunnableResult> {
  if (typeof options.rationale !== 'string' || options.rationale.trim() === '')
    fail('USAGE', 'a runnable-set change needs a non-blank --rationale');
  const list = options.versions ?? [];
  if (options.all === true && list.length > 0) fail('USAGE', 'give either versions or --all, not both');
  if (options.all !== true && list.length === 0) fail('USAGE', 'name the runnable versions, or give --all');
  for (const v of list) assertVersionName(v);
  if (new Set(list.map(versionKey)).size !== list.length)
    fail('USAGE', 'a version is named twice (names are compared case-insensitively)');
  if (options.defaultVersion !== undefined) assertVersionName(options.defaultVersion, 'default version');
  if (
    options.defaultVersion !== undefined &&
    list.length > 0 &&
    !list.some((v) => versionKey(v) === versionKey(options.defaultVersion!))
  )
    fail('USAGE', `--default ${options.defaultVersion} is not among the runnable versions`);
  const scope = normalizeScope(options.scope);
  const expect = parseExpect(options.expectRegistry);
  lockTimeout(options);
  const inputs = signingInputs(options);
  const store = openScenario(options);
  const actor = resolveActor(options.actor, store.paths.dir);
  // In a signed tree the receipt is signed by the actor's key, like every applied receipt.
  prepareSigning(store, options, {actor, role: 'sign'}, inputs);
  const canonical = (v: string) => readRelease(store, v).version;
  const versions = options.all === true ? null : list.map(canonical);
  const defaultVersion = options.defaultVersion === undefined ? null : canonical(options.defaultVersion);
  staleIfMoved(expect, registryState(store, scope).digest, scope);
  return store.withLock(lockTimeout(options), () => {
    // A tree two clones' merged histories left changes no further (DIVERGED), before anything is written.
    requireUndiverged(store);
    const state = registryState(store, scope);
    settleRegistry(store, state);
    staleIfMoved(expect, state.digest, scope);
    const last = state.receipts.at(-1);
    // The same change run again (after a crash, say): the newest receipt made it and nothing changed since; answered as
    // it was.
    if (
      last?.action === 'runnable' &&
      last.rationale === options.rationale.trim() &&
      last.registry_after === state.digest &&
      jsonEqual(last.registry!.runnable, {versions, default_version: defaultVersion})
    ) {
      return {
        status: 'applied',
        scenario: store.scenario,
        scope,
        runnable: last.registry!.runnable,
        receipt_seq: last.seq,
        registry_before: last.registry_before,
        registry_after: last.registry_after!,
      };
    }
    const seq = state.receipts.length + 1;
    const next: Registry = {...state.registry, runnable: {versions, default_version: defaultVersion}};
    const receipt = nextReceipt(
      store,
      state,
      {
        action: 'runnable',
        version: null,
        bundle_digest: null,
        actor,
        at: isoTimestamp(now(options)),
        from_state: null,
        requested_state: null,
        target_state: null,
        applied: true,
        blockers: [],
        rationale: options.rationale.trim(),
        deprecated_versions: [],
        promotion_id: null,
      },
      next,
    );
    createReceipt(store, receipt);
    swapRegistry(store, scope, state.digest, receipt.registry!);
    return {
      status: 'applied',
      scenario: store.scenario,
      scope,
      runnable: receipt.registry!.runnable,
      receipt_seq: seq,
      registry_before: state.digest,
      registry_after: receipt.registry_after!,
    };
  });
}
