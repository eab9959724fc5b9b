import {stableDigest} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {receiptRegistryProblem} from '../../../model/release/receipt-registry.js';
import {receiptCore, registryProblem, type Registry, type TransitionReceipt} from '../../../model/release/release.js';
import {readDocument} from '../../documents.js';
import {isDirectory, listDir} from '../../files/fs.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';
import {createSigned} from '../signing/signatures.js';

/**
 * context_bundles/releases/receipts/<scope>/<seq>.json (autoctx addition):
 * one immutable receipt per transition, applied or blocked, numbered 1, 2, 3
 * … per scope and chained by the digest of the one before. An applied
 * receipt carries the registry it wrote: it is written before the registry,
 * so a crash between the two leaves a registry one receipt behind, which the
 * next change or repair completes from it.
 */
export const RECEIPT_SCHEMA = 'release-receipt' as const;
const FILE = /^\d{6}\.json$/;

function check(ctx: KindContext, r: TransitionReceipt, scope: string, seq: number): TransitionReceipt {
  if (r.seq !== seq) fail('DIGEST_MISMATCH', `says it is receipt ${r.seq} but is stored as ${seq}`);
  if (r.scope !== scope) fail('DIGEST_MISMATCH', `names scope ${JSON.stringify(r.scope)} but is stored under ${scope}`);
  if (r.scenario !== ctx.scenario)
    fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(r.scenario)}, not ${JSON.stringify(ctx.scenario)}`);
  if ((seq === 1) !== (r.previous_receipt_sha256 === null))
    fail('DIGEST_MISMATCH', 'previous_receipt_sha256 must be null exactly for receipt 1');
  if (r.applied) {
    if (r.registry === null || r.blockers.length > 0)
      fail('DIGEST_MISMATCH', 'an applied receipt carries the registry it wrote and no blockers');
    if (r.registry.scope !== scope || r.registry.scenario !== ctx.scenario || r.registry.receipt?.seq !== seq)
      fail('DIGEST_MISMATCH', "the registry it carries is not this scope's, or was not written by this receipt");
    if (r.registry.receipt.sha256 !== stableDigest(receiptCore(r)))
      fail(
        'DIGEST_MISMATCH',
        'the registry it carries names another receipt (receipt.sha256 is not the digest of this receipt ' +
          'but for its registry)',
      );
    if (stableDigest(r.registry) !== r.registry_after)
      fail('DIGEST_MISMATCH', 'registry_after is not the digest of the registry it carries');
    const problem = registryProblem(r.registry, scope, ctx.scenario);
    if (problem) fail('DIGEST_MISMATCH', `the registry it carries ${problem}`);
  } else {
    if (r.registry !== null || r.blockers.length === 0 || r.registry_after !== r.registry_before)
      fail('DIGEST_MISMATCH', 'a blocked receipt names its blockers and changes no registry');
  }
  if (
    (r.action !== 'runnable') !==
    (r.version !== null && r.bundle_digest !== null && r.target_state !== null && r.from_state !== null)
  )
    fail(
      'DIGEST_MISMATCH',
      'a transition or rollback receipt names its version, bundle and states; a runnable-set receipt none',
    );
  if ((r.action === 'rollback') !== (r.execution_key !== undefined))
    fail('DIGEST_MISMATCH', 'exactly a rollback receipt names the execution (RBX-…) it carries out');
  if (r.action === 'rollback' && (!r.applied || r.target_state !== 'ACTIVE'))
    fail(
      'DIGEST_MISMATCH',
      'a rollback receipt is applied and makes its version ACTIVE (a refused rollback writes only its ' +
        'execution record)',
    );
  return r;
}

export function readReceipt(ctx: KindContext, scope: string, seq: number): TransitionReceipt | null {
  return readDocument<TransitionReceipt>(ctx.guard, ctx.paths.releaseReceipt(scope, seq), RECEIPT_SCHEMA, (v) =>
    check(ctx, v as unknown as TransitionReceipt, scope, seq),
  );
}

export function listReceiptSeqs(ctx: KindContext, scope: string): number[] {
  return listDir(ctx.guard, ctx.paths.releaseReceiptDir(scope))
    .filter((e) => e.isFile() && FILE.test(e.name))
    .map((e) => Number(e.name.slice(0, 6)))
    .sort((a, b) => a - b);
}

/** The scopes with a receipts folder or a registry. */
export function listReleaseScopes(ctx: KindContext): string[] {
  const scopes = new Set<string>();
  for (const e of listDir(ctx.guard, ctx.paths.releaseReceiptsDir)) if (e.isDirectory()) scopes.add(e.name);
  for (const e of listDir(ctx.guard, ctx.paths.releaseRegistryDir))
    if (e.isFile() && e.name.endsWith('.json')) scopes.add(e.name.slice(0, -5));
  return [...scopes].sort();
}

/** Every receipt of a scope, in order; a gap is an integrity error (INTEGRITY, exit 8). */
export function readReceipts(ctx: KindContext, scope: string): TransitionReceipt[] {
  const seqs = listReceiptSeqs(ctx, scope);
  const out: TransitionReceipt[] = [];
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] !== i + 1) {
      const rel = ctx.guard.relative(ctx.paths.releaseReceipt(scope, i + 1));
      fail(
        'INTEGRITY',
        `${rel} is missing: the receipts of scope ${scope} must run from 1 without a gap; run autoctx verify`,
        {file: rel},
      );
    }
    out.push(readReceipt(ctx, scope, i + 1)!);
  }
  return out;
}

/**
 * The receipts a signed tree signs: every applied one (a transition to any state, a runnable-set change, a rollback),
 * since each changes what may serve.
 */
export function signedReceipt(r: TransitionReceipt): boolean {
  return r.applied;
}

/** Under the scenario lock: write the next receipt (immutable). */
export function createReceipt(ctx: KindContext, r: TransitionReceipt): void {
  if (signedReceipt(r))
    createSigned(ctx, ctx.paths.releaseReceipt(r.scope, r.seq), RECEIPT_SCHEMA, r, 'release-receipt');
  else ctx.writer.createDocument(ctx.paths.releaseReceipt(r.scope, r.seq), RECEIPT_SCHEMA, r);
}

/**
 * verify: a scope's receipts run 1…n without a gap, each chained to the one
 * before, and each applied one starts from the registry the applied one
 * before it wrote. Returns the receipts that read back, in order (undefined
 * where one did not).
 */
export function verifyReceipts(c: Findings, scope: string): Array<TransitionReceipt | undefined> {
  const {store} = c;
  if (!isDirectory(store.paths.releaseReceiptDir(scope))) return [];
  const seqs = listReceiptSeqs(store, scope);
  const last = seqs.at(-1) ?? 0;
  const out: Array<TransitionReceipt | undefined> = [];
  let previous: TransitionReceipt | null | undefined = null;
  let lastAfter: string | null | undefined = null;
  // The registry the applied receipt before wrote (null: none yet; undefined: it did not read back).
  let lastRegistry: Registry | null | undefined = null;
  for (let seq = 1; seq <= last; seq++) {
    const file = store.paths.releaseReceipt(scope, seq);
    if (!seqs.includes(seq)) {
      c.error(
        file,
        'MISSING_RECEIPT',
        `${c.rel(file)} is missing: the receipts of scope ${scope} must run from 1 to ${last} without a gap`,
      );
      out.push(undefined);
      previous = lastAfter = lastRegistry = undefined;
      continue;
    }
    const r = c.attempt(file, () => readReceipt(store, scope, seq)) ?? undefined;
    out.push(r);
    if (!r) {
      previous = lastAfter = lastRegistry = undefined;
      continue;
    }
    if (previous !== undefined && r.previous_receipt_sha256 !== (previous ? stableDigest(previous) : null)) {
      const message =
        `${c.rel(file)} does not chain to the receipt before it (previous_receipt_sha256 differs from the ` +
        `digest of ${c.rel(store.paths.releaseReceipt(scope, seq - 1))})`;
      if (previous) c.both(store.paths.releaseReceipt(scope, seq - 1), file, 'RECEIPT_MISMATCH', message);
      else c.error(file, 'RECEIPT_MISMATCH', message);
    }
    if (lastAfter !== undefined && r.registry_before !== lastAfter)
      c.error(
        file,
        'RECEIPT_MISMATCH',
        `${c.rel(file)} starts from registry ${r.registry_before ?? 'none'}, but the applied receipt ` +
          `before it left ${lastAfter ?? 'none'}`,
      );
    if (lastRegistry !== undefined) {
      const problem = receiptRegistryProblem(lastRegistry, r);
      if (problem) c.error(file, 'RECEIPT_MISMATCH', `${c.rel(file)}: ${problem}`);
    }
    if (r.applied) {
      lastAfter = r.registry_after;
      lastRegistry = r.registry;
    }
    previous = r;
  }
  return out;
}
