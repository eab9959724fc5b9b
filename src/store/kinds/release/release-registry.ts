import {receiptRegistryProblem} from '../../../model/release/receipt-registry.js';
import {stableDigest} from '../../../canonical/index.js';
import {fail, isAutoctxError} from '../../../errors.js';
import {emptyRegistry, registryProblem, type Registry, type TransitionReceipt} from '../../../model/release/release.js';
import {compareAndSwap, documentDigest} from '../../files/cas.js';
import {readDocument} from '../../documents.js';
import {exists} from '../../files/fs.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';
import {listReleaseScopes, readReceipts, receiptFile} from './release-receipt.js';
import type {ScenarioRepair} from '../common/kind-steps.js';

/**
 * context_bundles/releases/registry/<scope>.json (autoctx addition): the one
 * mutable release document of a scope and scenario, changed only by
 * compare-and-swap on its digest, after the applied receipt that carries it.
 * In the global scope it holds no ACTIVE: ACTIVE is active.json's.
 */
export const REGISTRY_SCHEMA = 'release-registry' as const;

export function readRegistryFile(ctx: KindContext, scope: string): Registry | null {
  return readDocument<Registry>(ctx.guard, ctx.paths.releaseRegistry(scope), REGISTRY_SCHEMA, (v) => {
    const r = v as unknown as Registry;
    const problem = registryProblem(r, scope, ctx.scenario);
    if (problem) fail('DIGEST_MISMATCH', problem);
    return r;
  });
}

export interface RegistryState {
  scope: string;
  /** The registry in force: the file, or the newest applied receipt's when the file is one behind it. */
  registry: Registry;
  /** The digest a compare-and-swap compares (null: no registry yet). */
  digest: string | null;
  /** An applied receipt whose registry is not written yet (a change cut short). */
  pending: TransitionReceipt | null;
  receipts: TransitionReceipt[];
}

/**
 * The registry in force, checked against its receipts: its digest must be
 * the "after" digest of the newest applied receipt (or the "before" one,
 * when that receipt's registry is not written yet). Anything else is a hand
 * edit or a lost receipt: INTEGRITY (exit 8), naming the file.
 */
export function registryState(ctx: KindContext, scope: string): RegistryState {
  const receipts = readReceipts(ctx, scope);
  const file = ctx.paths.releaseRegistry(scope);
  const stored = readRegistryFile(ctx, scope);
  const digest = stored === null ? null : documentDigest(ctx.writer, file);
  const applied = receipts.filter((r) => r.applied).at(-1) ?? null;
  const rel = ctx.guard.relative(file);
  if (applied === null) {
    if (stored !== null)
      fail(
        'INTEGRITY',
        `${rel} has no applied transition receipt that wrote it ` +
          `(edited by hand, or its receipts are gone); run autoctx verify`,
        {file: rel},
      );
    return {scope, registry: emptyRegistry(ctx.scenario, scope), digest: null, pending: null, receipts};
  }
  // The registry in force is what the newest applied receipt's declared change makes of the one before it.
  const prior = receipts.filter((r) => r.applied && r.seq < applied.seq).at(-1) ?? null;
  const problem = receiptRegistryProblem(prior?.registry ?? null, applied);
  if (problem) {
    const receipt = ctx.guard.relative(receiptFile(ctx, applied));
    fail('INTEGRITY', `${receipt}: ${problem}; run autoctx verify`, {file: receipt});
  }
  if (digest === applied.registry_after) return {scope, registry: stored!, digest, pending: null, receipts};
  if (digest === applied.registry_before)
    return {scope, registry: applied.registry!, digest: applied.registry_after, pending: applied, receipts};
  fail(
    'INTEGRITY',
    `${rel} is not the registry its newest applied receipt (${applied.seq}) wrote (edited by hand); run autoctx verify`,
    {file: rel},
  );
}

/** Under the scenario lock: write a pending registry from its receipt. Returns the receipt completed, if any. */
export function settleRegistry(ctx: KindContext, state: RegistryState): TransitionReceipt | null {
  if (!state.pending) return null;
  ctx.writer.replaceDocument(ctx.paths.releaseRegistry(state.scope), REGISTRY_SCHEMA, state.pending.registry);
  return state.pending;
}

/** Under the scenario lock, after the receipt: swap the registry from `expected` to the receipt's. */
export function swapRegistry(ctx: KindContext, scope: string, expected: string | null, next: Registry): void {
  compareAndSwap(ctx.writer, ctx.paths.releaseRegistry(scope), REGISTRY_SCHEMA, expected, next, (found) =>
    fail(
      'STALE_REGISTRY',
      `the registry of scope ${scope} moved while this command decided ` +
        `(expected ${expected ?? 'none'}, found ${found ?? 'none'})`,
      {scope},
    ),
  );
}

export function registryDigestOf(r: Registry): string {
  return stableDigest(r);
}

/**
 * verify: the registry is the one its newest applied receipt wrote (one
 * behind it after a crash: a warning), keeps the ACTIVE rule, and names only
 * releases that have descriptors.
 */
export function verifyRegistry(
  c: Findings,
  scope: string,
  receipts: Array<TransitionReceipt | undefined>,
  known: (version: string) => boolean,
  missing: (version: string, by: string) => void,
  forked = false,
): Registry | undefined {
  const {store} = c;
  const file = store.paths.releaseRegistry(scope);
  const present = exists(file);
  const stored = present ? c.attempt(file, () => readRegistryFile(store, scope)) : null;
  if (stored === undefined) return undefined;
  // Two clones' receipts merged: the registry is one side's (DIVERGED, reported), for a person to settle.
  if (forked) return stored ?? undefined;
  const complete = receipts.every((r) => r !== undefined);
  const applied = receipts.filter((r): r is TransitionReceipt => r !== undefined && r.applied).at(-1) ?? null;
  const digest = stored === null ? null : registryDigestOf(stored);
  let registry: Registry | undefined = stored ?? undefined;
  if (applied === null) {
    if (stored !== null && complete)
      c.error(
        file,
        'REGISTRY_MISMATCH',
        `${c.rel(file)} has no applied transition receipt that wrote it (edited by hand, or its receipts are gone)`,
      );
  } else if (digest === applied.registry_after) {
    // in line
  } else if (digest === applied.registry_before) {
    c.warn(
      file,
      'REGISTRY_PENDING',
      `${c.rel(file)} is one transition behind its receipts (receipt ${applied.seq} was ` +
        `written, the registry not yet); the next transition, or autoctx repair, completes it`,
    );
    registry = applied.registry!;
  } else if (stored === null) {
    c.error(
      file,
      'MISSING_REGISTRY',
      `${c.rel(file)} is missing, but applied receipt ${applied.seq} of scope ${scope} wrote it`,
    );
    registry = applied.registry!;
  } else {
    c.both(
      file,
      receiptFile(store, applied),
      'REGISTRY_MISMATCH',
      `${c.rel(file)} is not the registry its newest applied receipt (${applied.seq}) wrote: edited by hand`,
    );
  }
  if (registry) for (const r of Object.values(registry.releases)) if (!known(r.version)) missing(r.version, file);
  // The receipt the registry says wrote it must be there: a lost newest receipt is named, not only the mismatch it
  // leaves.
  const written = stored?.receipt;
  if (written && written.seq > receipts.length) {
    // Nothing names the receipt's file but the receipt after it: the registry names it by number and by the digest of
    // the receipt but for the registry it carries.
    const dir = store.paths.releaseReceiptDir(scope);
    c.error(
      dir,
      'MISSING_RECEIPT',
      `${c.rel(dir)} has no receipt ${written.seq}: ${c.rel(file)} was written by receipt ${written.seq} ` +
        `(the receipt whose digest but for its registry is ${written.sha256}), and it is missing`,
    );
  }
  return registry;
}

/** repair: a transition cut short after its receipt; the registry is written from the receipt. */
export const registryRepair: ScenarioRepair = {
  order: 400,
  repair({store, rel, actions, remaining}) {
    for (const scope of listReleaseScopes(store)) {
      try {
        const done = settleRegistry(store, registryState(store, scope));
        if (done)
          actions.push(
            `completed ${rel(store.paths.releaseRegistry(scope))} from ` +
              `${rel(receiptFile(store, done))}, a transition cut short after its receipt`,
          );
      } catch (error) {
        if (!isAutoctxError(error)) throw error;
        remaining.push(`${rel(store.paths.releaseRegistry(scope))}: ${error.message}; left as it is`);
      }
    }
  },
};
