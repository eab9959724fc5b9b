import type {CandidateRecord} from '../../../model/promotion/records.js';
import {versionKey, type TransitionReceipt} from '../../../model/release/release.js';
import type {Findings} from '../../findings.js';
import {readActive} from '../promotion/active-pointer.js';
import {pointerHistory, pointerMoves} from '../promotion/pointer-moves.js';
import {pointerDivergences} from '../promotion/divergence.js';
import {verifyDescriptors} from './release-descriptor.js';
import {listReleaseScopes, receiptFile, verifyReceipts} from './release-receipt.js';
import {verifyRegistry} from './release-registry.js';
import {exists} from '../../files/fs.js';
import {hasServed} from '../../../model/promotion/served.js';
import {readNegativeResult} from '../promotion/negative-result.js';
import {readStaleTerminalization} from '../promotion/terminal-markers.js';
import {readPromotion} from '../promotion/history.js';
import type {ScenarioCheck} from '../common/kind-steps.js';
import {isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';
import {readSigningStart} from '../signing/signing-records.js';
import {rejectionReason} from '../../../model/promotion/rejected.js';

/** The registry states that serve: ACTIVE (outside the global scope), CANARY, and SHADOW's sample. */
const SERVING = new Set(['ACTIVE', 'CANARY', 'SHADOW']);

/**
 * verify: releases. Each scope's receipts (numbered, chained, each applied
 * one starting from the registry the one before left), each descriptor (its
 * bundle verified, one name per bundle and per case-folded name, rollback
 * targets that served), each registry (the one its newest applied receipt
 * wrote, the ACTIVE rule, known releases), and every receipt naming a
 * release with the bundle its descriptor names.
 */
export function verifyReleases(c: Findings, records: Map<string, CandidateRecord>): void {
  const {store} = c;
  // Each pointer record was checked (and any problem reported) by the pointer's own checks; here a record that cannot
  // be read is left out.
  const quiet = <T>(_file: string, fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (error) {
      rethrowUnless(error, isAutoctxError, isSystemError);
      return undefined;
    }
  };
  // One rule: a rejected bundle never serves. "Rejected" is the one definition (rejectionReason), from the records
  // verify read.
  const rejected = (digest: string): string | null =>
    rejectionReason(digest, {
      lifecycle: records.get(digest)?.lifecycle ?? null,
      hasNegativeResult: quiet('', () => readNegativeResult(store, digest)) != null,
      hasStaleRejection: quiet('', () => readStaleTerminalization(store, digest)) != null,
    });
  const active = quiet(store.paths.active, () => readActive(store));
  const activeRejection = active ? rejected(active.bundle_digest) : null;
  // A promotion on the pointer's history that made a rejected bundle serve is a merge of two clones (DIVERGED, named
  // by the pointer's checks): no single clone promotes a rejected bundle or rejects one that served.
  const divergedServing =
    active != null &&
    activeRejection !== null &&
    pointerDivergences(store, active, pointerHistory(store, active, records, quiet), records).some(
      (d) => d.digest === active.bundle_digest,
    );
  if (active && activeRejection && !divergedServing)
    c.error(
      store.paths.active,
      'REJECTED_SERVING',
      `${c.rel(store.paths.active)} names bundle ${active.bundle_digest} (${activeRejection}): a rejected ` +
        `bundle never serves (autoctx rollback moves the pointer away)`,
    );
  if (!exists(store.paths.releasesDir)) return;
  const chain = active ? pointerHistory(store, active, records, quiet).chain : pointerMoves(store, quiet);
  const receipts = new Map<string, Array<TransitionReceipt | undefined>>();
  const forked = new Set<string>();
  for (const scope of listReleaseScopes(store)) {
    const read = verifyReceipts(c, scope);
    receipts.set(scope, read.receipts);
    if (read.forked) forked.add(scope);
  }
  const servedIn = (target: {version: string; bundle_digest: string}, scope: string) =>
    hasServed(scope, target, {chain, receipts: receipts.get(scope) ?? []});
  const descriptors = verifyDescriptors(c, servedIn);
  /** A release named but without its descriptor: the error names the descriptor's file, and what names it. */
  const missing = (version: string, by: string) => {
    const file = store.paths.releaseVersion(version);
    c.error(file, 'MISSING_RELEASE', `${c.rel(file)} is missing: ${c.rel(by)} names release ${version}`);
  };
  // In a signed tree the command that ends a release signs its receipt: the advice names the key it needs.
  const signedHow = quiet('', () => readSigningStart(store)) ? ' --signing-key KEY' : '';
  for (const [scope, list] of receipts) {
    const registry = verifyRegistry(c, scope, list, (v) => descriptors.has(versionKey(v)), missing, forked.has(scope));
    // A scope whose receipts fork holds one side's registry: the fork is the finding (DIVERGED), not what that side
    // serves.
    for (const r of forked.has(scope) ? [] : Object.values(registry?.releases ?? {})) {
      const d = descriptors.get(versionKey(r.version));
      const why = d && SERVING.has(r.state) ? rejected(d.bundle_digest) : null;
      if (!d || !why) continue;
      const file = store.paths.releaseRegistry(scope);
      c.error(
        file,
        'REJECTED_SERVING',
        `${c.rel(file)} holds release ${r.version} as ${r.state} in scope ${scope}, but its bundle is a ` +
          `rejected candidate (${why}): a rejected bundle never serves ` +
          `(` +
          `${
            r.state === 'ACTIVE'
              ? `autoctx rollback --scope ${scope}${signedHow} moves the scope away from it`
              : `autoctx repair${signedHow} (or autoctx reject ${d.bundle_digest.slice(0, 12)}${signedHow} ` +
                `--rationale TEXT) ends it with a receipt`
          }` +
          `)`,
      );
    }
    for (const r of list) {
      if (r) followReceipt(c, scope, r, descriptors, missing);
      if (!r || r.version === null) continue;
      const file = receiptFile(store, r);
      const d = descriptors.get(versionKey(r.version));
      if (!d) missing(r.version, file);
      else if (d.bundle_digest !== r.bundle_digest)
        c.error(
          file,
          'RECEIPT_MISMATCH',
          `${c.rel(file)} names release ${r.version} with bundle ${r.bundle_digest}, but its descriptor ` +
            `names ${d.bundle_digest}`,
        );
    }
  }
}

/**
 * The other documents a receipt names: the promotion it made (which promoted its bundle), the releases it deprecated.
 */
function followReceipt(
  c: Findings,
  scope: string,
  r: TransitionReceipt,
  descriptors: Map<string, unknown>,
  missing: (version: string, by: string) => void,
): void {
  const {store} = c;
  const file = receiptFile(store, r);
  for (const v of r.deprecated_versions) if (!descriptors.has(versionKey(v))) missing(v, file);
  if (r.promotion_id === null) return;
  const promotionFile = store.paths.promotion(r.promotion_id);
  const p = c.attempt(promotionFile, () => readPromotion(store, r.promotion_id!));
  if (p === null)
    c.error(
      promotionFile,
      'MISSING_PROMOTION',
      `${c.rel(promotionFile)} is missing: ${c.rel(file)} names promotion ${r.promotion_id}`,
    );
  else if (p && p.candidate_digest !== r.bundle_digest)
    c.error(
      file,
      'LINEAGE_MISMATCH',
      `${c.rel(file)} names promotion ${r.promotion_id}, which promoted ${p.candidate_digest}, not ` +
        `${r.bundle_digest ?? 'no bundle'}`,
    );
}

export const releasesCheck: ScenarioCheck = {
  order: 900,
  scenario(c, view) {
    verifyReleases(c, view.records);
  },
};
