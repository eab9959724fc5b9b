import {stableDigest} from '../../../canonical/index.js';
import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';
import {receiptRegistryProblem} from '../../../model/release/receipt-registry.js';
import {receiptCore, registryProblem, type Registry, type TransitionReceipt} from '../../../model/release/release.js';
import {readDocument} from '../../documents.js';
import path from 'node:path';
import {exists, isDirectory, listDir} from '../../files/fs.js';
import {historyKeyOf, type HistoryKey} from '../../layout/history-names.js';
import {
  forkMessage,
  forkProblem,
  listEntryNames,
  seqNamedEntries,
  shapeOf,
  type Linked,
  type SeqNamed,
} from '../common/entry-chain.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';
import {createSigned} from '../signing/signatures.js';

/**
 * context_bundles/releases/receipts/<scope>/<sha256>.json (autoctx addition):
 * one immutable receipt per transition, applied or blocked, chained by the
 * digest of the one before and named by its own (the digest the receipt
 * after it names); numbered 1, 2, 3 … per scope by its place on the chain,
 * which its `seq` must agree with. `<seq>.json`, the names earlier versions
 * gave, are read as they are. An applied
 * receipt carries the registry it wrote: it is written before the registry,
 * so a crash between the two leaves a registry one receipt behind, which the
 * next change or repair completes from it.
 */
export const RECEIPT_SCHEMA = 'release-receipt' as const;

function check(ctx: KindContext, r: TransitionReceipt, scope: string, key: HistoryKey): TransitionReceipt {
  if (typeof key === 'number' && r.seq !== key)
    fail('DIGEST_MISMATCH', `says it is receipt ${r.seq} but is stored as ${key}`);
  if (typeof key === 'string' && stableDigest(r) !== key)
    fail('DIGEST_MISMATCH', 'is not named by its own digest (its content changed, or it was renamed)');
  const seq = r.seq;
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
        'the registry it carries names another receipt (receipt.sha256 ' +
          'is not the digest of this receipt but for its registry)',
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
      'a rollback receipt is applied and makes its version ACTIVE ' +
        '(a refused rollback writes only its execution record)',
    );
  return r;
}

export function readReceipt(ctx: KindContext, scope: string, key: HistoryKey): TransitionReceipt | null {
  return readDocument<TransitionReceipt>(ctx.guard, ctx.paths.releaseReceipt(scope, key), RECEIPT_SCHEMA, (v) =>
    check(ctx, v as unknown as TransitionReceipt, scope, key),
  );
}

/** The names of a scope's receipts, either naming. */
export function listReceiptNames(ctx: KindContext, scope: string): string[] {
  return listEntryNames(ctx.guard, ctx.paths.releaseReceiptDir(scope));
}

/** The file a receipt is stored in: its digest's name, or the position an earlier version named it by. */
export function receiptFile(ctx: KindContext, r: TransitionReceipt): string {
  const named = ctx.paths.releaseReceipt(r.scope, stableDigest(r));
  return exists(named) ? named : ctx.paths.releaseReceipt(r.scope, r.seq);
}

function linkedReceipt(name: string, key: HistoryKey, r: TransitionReceipt): Linked<TransitionReceipt> {
  return {name, key, value: r, digest: stableDigest(r), previous: r.previous_receipt_sha256};
}

/** A scope's receipts stored under their positions, as earlier versions named them (`autoctx repair` renames them). */
export function seqNamedReceipts(ctx: KindContext, scope: string): SeqNamed[] {
  return seqNamedEntries(
    ctx.guard,
    ctx.paths.releaseReceiptDir(scope),
    (key) => ctx.paths.releaseReceipt(scope, key),
    (seq) => readReceipt(ctx, scope, seq),
    stableDigest,
  );
}

/** The scopes with a receipts folder or a registry. */
export function listReleaseScopes(ctx: KindContext): string[] {
  const scopes = new Set<string>();
  for (const e of listDir(ctx.guard, ctx.paths.releaseReceiptsDir)) if (e.isDirectory()) scopes.add(e.name);
  for (const e of listDir(ctx.guard, ctx.paths.releaseRegistryDir))
    if (e.isFile() && e.name.endsWith('.json')) scopes.add(e.name.slice(0, -5));
  return [...scopes].sort();
}

/**
 * Every receipt of a scope, in the order their links give; a fork is DIVERGED (exit 8), a lost receipt or a number
 * that is not its place an integrity error (INTEGRITY, exit 8).
 */
export function readReceipts(ctx: KindContext, scope: string): TransitionReceipt[] {
  const dir = ctx.paths.releaseReceiptDir(scope);
  const shape = shapeOf(
    listReceiptNames(ctx, scope).flatMap((name) => {
      const key = historyKeyOf(name);
      const r = readReceipt(ctx, scope, key);
      return r ? [linkedReceipt(name, key, r)] : [];
    }),
  );
  const where = ctx.guard.relative(dir);
  const fork = forkProblem(shape, (n) => ctx.guard.relative(path.join(dir, n)));
  // Two receipts that follow the same one: each side of a merge appended to the scope, which no clone does.
  if (fork) fail('DIVERGED', fork, {file: where});
  if (shape.detached.length > 0)
    fail(
      'INTEGRITY',
      `${ctx.guard.relative(path.join(dir, shape.detached[0]!.name))} follows a receipt that is ` +
        `missing: the receipts of scope ${scope} must run in one chain from the first; run autoctx verify`,
      {file: where},
    );
  shape.line.forEach((e, i) => {
    if (e.value.seq !== i + 1)
      fail(
        'INTEGRITY',
        `${ctx.guard.relative(path.join(dir, e.name))} says it is receipt ` +
          `${e.value.seq} but is receipt ${i + 1} of scope ${scope}; run autoctx verify`,
        {file: where},
      );
  });
  return shape.line.map((e) => e.value);
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
  const file = ctx.paths.releaseReceipt(r.scope, stableDigest(r));
  if (signedReceipt(r)) createSigned(ctx, file, RECEIPT_SCHEMA, r, 'release-receipt');
  else ctx.writer.createDocument(file, RECEIPT_SCHEMA, r);
}

/** Two receipts (or more) that follow the same one, and the one they follow (none: each is a first receipt). */
function receiptForkMessage(
  ctx: KindContext,
  scope: string,
  stored: Array<Linked<TransitionReceipt>>,
  fork: Array<Linked<TransitionReceipt>>,
): string {
  const rel = (name: string) => ctx.guard.relative(path.join(ctx.paths.releaseReceiptDir(scope), name));
  const before = stored.find((e) => e.digest === fork[0]!.previous);
  return forkMessage(
    fork.map((e) => rel(e.name)),
    `the receipts of scope ${scope}`,
    before ? rel(before.name) : 'no receipt (each is a first receipt)',
  );
}

/** A fork in a scope's receipts: two of its files, the bundle the first names, and what verify says of it. */
export interface ReceiptFork {
  scope: string;
  digest: string;
  files: [string, string];
  message: string;
}

/**
 * The forks in every scope's receipts (for repair, status and the commands that change what serves): a receipt that
 * cannot be read is left out here (verify names it).
 */
export function receiptForks(ctx: KindContext): ReceiptFork[] {
  const out: ReceiptFork[] = [];
  for (const scope of listReleaseScopes(ctx)) {
    const dir = ctx.paths.releaseReceiptDir(scope);
    const stored = listReceiptNames(ctx, scope).flatMap((name) => {
      const key = historyKeyOf(name);
      try {
        const r = readReceipt(ctx, scope, key);
        return r ? [linkedReceipt(name, key, r)] : [];
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        return [];
      }
    });
    for (const fork of shapeOf(stored).forks)
      out.push({
        scope,
        digest: fork[0]!.value.bundle_digest ?? '',
        files: [path.join(dir, fork[0]!.name), path.join(dir, fork[1]!.name)],
        message: receiptForkMessage(ctx, scope, stored, fork),
      });
  }
  return out;
}

/** What verify found of a scope's receipts. */
export interface ReceiptsRead {
  /** In the order their links give (undefined where one did not read back or is missing). */
  receipts: Array<TransitionReceipt | undefined>;
  /** Two receipts follow the same one: a merge of two clones (DIVERGED, reported). */
  forked: boolean;
}

/**
 * verify: a scope's receipts are one chain from the first, each named by its
 * own digest (or by its position, as earlier versions named them), each
 * numbered by its place on the chain, and each applied one starts from the
 * registry the applied one before it wrote. Two receipts that follow the same
 * one are a fork (DIVERGED).
 */
export function verifyReceipts(c: Findings, scope: string): ReceiptsRead {
  const {store} = c;
  const dir = store.paths.releaseReceiptDir(scope);
  if (!isDirectory(dir)) return {receipts: [], forked: false};
  const fileOf = (name: string) => path.join(dir, name);
  const stored: Array<Linked<TransitionReceipt>> = [];
  for (const name of listReceiptNames(store, scope)) {
    const key = historyKeyOf(name);
    const r = c.attempt(fileOf(name), () => readReceipt(store, scope, key));
    if (r) stored.push(linkedReceipt(name, key, r));
  }
  const shape = shapeOf(stored);
  for (const fork of shape.forks) {
    const message = receiptForkMessage(store, scope, stored, fork);
    for (const e of fork) c.error(fileOf(e.name), 'DIVERGED', message);
  }
  const out: Array<TransitionReceipt | undefined> = [];
  let lastAfter: string | null | undefined = null;
  // The registry the applied receipt before wrote (null: none yet; undefined: it did not read back).
  let lastRegistry: Registry | null | undefined = null;
  const follow = (e: Linked<TransitionReceipt>, position: number | null) => {
    const r = e.value;
    const file = fileOf(e.name);
    if (position !== null && r.seq !== position)
      c.error(
        file,
        'RECEIPT_MISMATCH',
        `${c.rel(file)} says it is receipt ${r.seq} but is receipt ${position} of scope ${scope} on its chain`,
      );
    if (lastAfter !== undefined && r.registry_before !== lastAfter)
      c.error(
        file,
        'RECEIPT_MISMATCH',
        `${c.rel(file)} starts from registry ${r.registry_before ?? 'none'}, ` +
          `but the applied receipt before it left ${lastAfter ?? 'none'}`,
      );
    if (lastRegistry !== undefined) {
      const problem = receiptRegistryProblem(lastRegistry, r);
      if (problem) c.error(file, 'RECEIPT_MISMATCH', `${c.rel(file)}: ${problem}`);
    }
    if (r.applied) {
      lastAfter = r.registry_after;
      lastRegistry = r.registry;
    }
    out.push(r);
  };
  shape.line.forEach((e, i) => follow(e, i + 1));
  const digests = new Set(stored.map((e) => e.digest));
  // After a lost receipt: each piece is checked from its own start; the loss is named by what follows it.
  for (const e of [...shape.detached].sort((a, b) => a.value.seq - b.value.seq)) {
    const previous = e.previous;
    if (previous !== null && !digests.has(previous)) {
      const legacy = typeof e.key === 'number' ? e.key - 1 : null;
      const lost =
        legacy !== null && legacy >= 1 ? fileOf(`${String(legacy).padStart(6, '0')}.json`) : fileOf(`${previous}.json`);
      if (exists(lost) && legacy !== null)
        c.both(
          lost,
          fileOf(e.name),
          'RECEIPT_MISMATCH',
          `${c.rel(fileOf(e.name))} does not chain to the receipt before it ` +
            `(previous_receipt_sha256 differs from the digest of ${c.rel(lost)})`,
        );
      else if (!exists(lost))
        c.error(
          lost,
          'MISSING_RECEIPT',
          `${c.rel(lost)} is missing: ${c.rel(fileOf(e.name))} follows it in the receipts of scope ${scope}`,
        );
      out.push(undefined);
      lastAfter = lastRegistry = undefined;
    }
    follow(e, null);
  }
  if (shape.forks.length > 0) out.push(undefined);
  return {receipts: out, forked: shape.forks.length > 0};
}
