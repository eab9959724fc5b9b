import type {CandidateRecord} from '../../../model/promotion/records.js';
import {GLOBAL_SCOPE, versionKey, type ReleaseDescriptor} from '../../../model/release/release.js';
import {
  ROLLBACK_CONDITIONS,
  ROLLBACK_CONDITIONS_BEFORE_REJECTION,
  approvalProblem,
  approvalSkew,
  derivedStatus,
} from '../../../model/rollback/rollback-execution.js';
import {hasServed} from '../../../model/promotion/served.js';
import {listDescriptorKeys, readDescriptor} from '../release/release-descriptor.js';
import type {Findings} from '../../findings.js';
import {pointerMoves} from '../promotion/pointer-moves.js';
import type {PointerMove} from '../../../model/promotion/pointer-history.js';
import {listReleaseScopes, readReceipts} from '../release/release-receipt.js';
import {
  approvalKeyProblem,
  executionSha256,
  listApprovalKeys,
  listExecutionKeys,
  readApproval,
  readExecution,
} from './rollback-execution.js';
import type {ScenarioCheck} from '../common/kind-steps.js';
import {isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';

/**
 * verify: the rollback service's records. Each execution reads back (its key
 * is the one its fields give; its status agrees with its conditions), names
 * bundles the scenario holds, and, executed outside the global scope, was
 * carried out by exactly one rollback receipt of its scope (in the global
 * scope the pointer history checks it as a move). Each approval is bound to
 * the exact bytes of an emergency execution, by someone else, in its window.
 * An emergency execution past its window without an approval is flagged.
 */
export function verifyRollbacks(c: Findings, _records: Map<string, CandidateRecord>): void {
  const {store} = c;
  const keys = new Set(listExecutionKeys(store));
  let moves: PointerMove[] | null = null;
  const movedTo = () =>
    (moves ??= pointerMoves(store, (_f, fn) => {
      try {
        return fn();
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        return undefined; // each record's own checks report it
      }
    }));
  let descriptorsRead: ReleaseDescriptor[] | null = null;
  const allDescriptors = () =>
    (descriptorsRead ??= listDescriptorKeys(store).flatMap((k) => {
      try {
        const d = readDescriptor(store, k);
        return d ? [d] : [];
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        return []; // the descriptors' own checks report it
      }
    }));
  const receiptsOf = new Map<string, ReturnType<typeof readReceipts> | null>();
  const receipts = (scope: string) => {
    if (!receiptsOf.has(scope)) {
      try {
        receiptsOf.set(scope, readReceipts(store, scope));
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        receiptsOf.set(scope, null); // the receipts' own checks report it
      }
    }
    return receiptsOf.get(scope)!;
  };
  for (const key of keys) {
    const file = store.paths.rollbackExecution(key);
    const r = c.attempt(file, () => readExecution(store, key));
    if (!r) continue;
    for (const d of [r.from_digest, r.to_digest])
      if (d !== null && r.status !== 'REFUSED' && !c.bundle(d))
        c.error(
          file,
          'MISSING_BUNDLE',
          `${c.rel(file)} names bundle ${d}, whose manifest ${c.rel(store.paths.bundle(d))} is missing or invalid`,
        );
    // The names it records are the names the descriptors give those bundles, and the conditions are the eight (seven
    // before TARGET_NOT_REJECTED), in order.
    const descriptors = allDescriptors();
    // A bundle may be named after the rollback (null then); a name recorded must be its descriptor's, and the
    // descriptor must exist.
    for (const [version, digest] of [
      [r.from_version, r.from_digest],
      [r.to_version, r.to_digest],
    ] as const) {
      if (version === null) continue;
      const d = descriptors.find((x) => versionKey(x.version) === versionKey(version));
      if (!d) {
        const missing = store.paths.releaseVersion(version);
        // Named against both: the descriptor a deletion lost, and the record whose name no descriptor gives.
        c.both(
          missing,
          file,
          'MISSING_RELEASE',
          `${c.rel(missing)} is missing: ${c.rel(file)} names release ${version}`,
        );
      } else if (d.version !== version || d.bundle_digest !== digest)
        c.error(
          file,
          'LINEAGE_MISMATCH',
          `${c.rel(file)}: release ${version} is not the release of bundle ${digest ?? 'none'} it names`,
        );
    }
    if (
      r.requested_target !== null &&
      (r.to_version === null || versionKey(r.requested_target) !== versionKey(r.to_version))
    )
      c.error(
        file,
        'LINEAGE_MISMATCH',
        `${c.rel(file)}: it was asked for ${r.requested_target}, but names ${r.to_version ?? 'no target'}`,
      );
    // The eight every rollback checks, in order (a record written before TARGET_NOT_REJECTED was checked: the other
    // seven).
    const codes = r.conditions.map((x) => x.code).join();
    if (codes !== Object.keys(ROLLBACK_CONDITIONS).join() && codes !== ROLLBACK_CONDITIONS_BEFORE_REJECTION.join())
      c.error(
        file,
        'DIGEST_MISMATCH',
        `${c.rel(file)}: its conditions are not the eight every rollback checks, in order`,
      );
    const to = r.to_digest !== null ? c.bundle(r.to_digest) : undefined;
    if (to && to.evaluator_epoch !== r.evaluator_epoch)
      c.error(
        file,
        'LINEAGE_MISMATCH',
        `${c.rel(file)}: evaluator_epoch differs from the ${r.status === 'REFUSED' ? 'target' : 'restored'} bundle's`,
      );
    // In the global scope the pointer it moved (or was refused) from is one a recorded move wrote: its bundle, at that
    // time.
    if (
      r.scope === GLOBAL_SCOPE &&
      r.from_digest !== null &&
      !movedTo().some((m) => m.to === r.from_digest && (m.pointer?.activated_at ?? m.at) === r.from_activated_at)
    )
      c.error(
        file,
        'LINEAGE_MISMATCH',
        `${c.rel(file)}: no recorded move made ${r.from_digest} active at ` +
          `${r.from_activated_at ?? 'the time it names'}`,
      );
    if (r.scope !== GLOBAL_SCOPE && r.status !== 'REFUSED') {
      const list = receipts(r.scope);
      if (list) {
        const carried = list.filter((x) => x.execution_key === key);
        if (carried.length === 0)
          c.warn(
            file,
            'MOVE_PENDING',
            `${c.rel(file)}: this rollback of scope ${r.scope} was recorded but no rollback receipt ` +
              `carried it out (an interrupted command; running it again completes it)`,
          );
        else if (carried.length > 1)
          c.error(
            file,
            'RECEIPT_MISMATCH',
            `${c.rel(file)} was carried out by ${carried.length} receipts of scope ${r.scope}`,
          );
        else {
          const x = carried[0]!;
          const before = list.filter((y) => y.seq < x.seq);
          const served = hasServed(
            r.scope,
            {version: r.to_version, bundle_digest: r.to_digest!},
            {chain: [], receipts: before},
          );
          if (
            x.version === null ||
            r.to_version === null ||
            versionKey(x.version) !== versionKey(r.to_version) ||
            x.bundle_digest !== r.to_digest ||
            x.registry_before !== r.registry_before
          )
            c.error(
              file,
              'RECEIPT_MISMATCH',
              `${c.rel(file)}: receipt ${x.seq} of scope ${r.scope} carries out another rollback than this record's`,
            );
          else if (!served)
            c.error(
              file,
              'ROLLBACK_NOT_SERVED',
              `${c.rel(file)} restored ${r.to_version} in scope ${r.scope}, which had not served there before`,
            );
        }
      }
    }
    const approvalFile = store.paths.rollbackApproval(key);
    const approval = c.attempt(approvalFile, () => readApproval(store, key));
    if (approval) {
      const problem = approvalProblem(r, executionSha256(store, key)!, approval) ?? approvalKeyProblem(store, key);
      if (problem) c.error(approvalFile, 'APPROVAL_MISMATCH', `${c.rel(approvalFile)}: ${problem}`);
      const skew = problem ? null : approvalSkew(r, approval, c.approvalWindowDays);
      if (skew)
        c.note(
          approvalFile,
          'CLOCK_SKEW',
          `${c.rel(approvalFile)}: ${skew}: the approver's clock and the executor's differ; the approval ` +
            `is bound to the record's exact bytes, which orders it after the execution, and it stands`,
        );
    }
    if (derivedStatus(r, approval ?? null, c.at, c.approvalWindowDays) === 'EXPIRED_UNAPPROVED')
      c.warn(
        file,
        'EXPIRED_UNAPPROVED',
        `${c.rel(file)}: emergency rollback ${key} by ${r.actor} was not approved within ${c.approvalWindowDays} days`,
      );
  }
  for (const scope of listReleaseScopes(store)) {
    for (const x of receipts(scope) ?? []) {
      if (x.execution_key === undefined || keys.has(x.execution_key)) continue;
      const file = store.paths.rollbackExecution(x.execution_key);
      c.error(
        file,
        'MISSING_ROLLBACK_RECORD',
        `${c.rel(file)} is missing: receipt ${x.seq} of scope ${scope} carried out that rollback`,
      );
    }
  }
  for (const key of listApprovalKeys(store)) {
    if (keys.has(key)) continue;
    const file = store.paths.rollbackApproval(key);
    c.error(
      file,
      'APPROVAL_MISMATCH',
      `${c.rel(file)} approves ${key}, which has no execution record ${c.rel(store.paths.rollbackExecution(key))}`,
    );
  }
}

export const rollbacksCheck: ScenarioCheck = {
  order: 1000,
  scenario(c, view) {
    verifyRollbacks(c, view.records);
  },
};
