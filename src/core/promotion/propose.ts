import {fail} from '../../errors.js';
import {manifestDiff} from '../../model/bundle/diff.js';
import {type Lifecycle} from '../../model/promotion/lifecycle.js';
import {isoTimestamp, type CandidateRecord} from '../../model/promotion/records.js';
import {readSource} from '../../store/index.js';
import {bundleFromSource, verifySourceDigests} from '../bundle/build.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {requireBundle, writeBundle} from '../../store/kinds/bundle/bundle.js';
import {readRecord, writeRecord} from '../../store/kinds/promotion/candidate-record.js';
import {writeManifestDiff} from '../../store/kinds/bundle/manifest-diff.js';

export interface ProposeOptions extends StoreOptions {
  from: string;
  runId?: string | undefined;
  generation?: number | undefined;
  rationale?: string | undefined;
  /** Take a candidate whose components are exactly the active bundle's (refused otherwise: CANDIDATE_UNCHANGED). */
  allowUnchanged?: boolean | undefined;
}

export interface ProposeResult {
  status: 'proposed';
  created: boolean;
  lifecycle: Lifecycle;
  scenario: string;
  bundle_digest: string;
  parent_digest: string;
  manifest_diff_digest: string;
}

export const DEFAULT_RUN_ID = 'manual';

/**
 * A candidate whose parent is the active bundle: writes the manifest, then
 * manifest_diff.json, then record.json (proposed). The same run and generation
 * again returns the existing record.
 */
export async function propose(options: ProposeOptions): Promise<ProposeResult> {
  const runId = options.runId ?? DEFAULT_RUN_ID;
  const generation = options.generation ?? 0;
  if (!Number.isSafeInteger(generation) || generation < 0) fail('USAGE', '--generation must be a non-negative integer');
  const store = openScenario(options);
  const source = readSource(options.from);
  verifySourceDigests(source);
  const timeout = lockTimeout(options);
  return store.withLock(timeout, () => {
    const active = requireActive(store);
    const parent = requireBundle(store, active.bundle_digest);
    if (source.header) {
      const h = source.header;
      if (h.scenario !== store.scenario)
        fail('LINEAGE_MISMATCH', `${source.origin} is for scenario "${h.scenario}", not "${store.scenario}"`);
      if (h.evaluator_epoch !== active.evaluator_epoch)
        fail(
          'LINEAGE_MISMATCH',
          `${source.origin} has evaluator epoch "${h.evaluator_epoch}" but the active bundle's is ` +
            `"${active.evaluator_epoch}"`,
        );
      if (h.parent_digest !== active.bundle_digest)
        fail(
          'LINEAGE_MISMATCH',
          `${source.origin} names parent ${String(h.parent_digest)} but the active bundle is ${active.bundle_digest}`,
        );
    }
    const bundle = bundleFromSource(source, {
      scenario: store.scenario,
      evaluator_epoch: active.evaluator_epoch,
      parent_digest: active.bundle_digest,
    });
    const diff = manifestDiff(bundle, parent);
    const result = (created: boolean, lifecycle: Lifecycle): ProposeResult => ({
      status: 'proposed',
      created,
      lifecycle,
      scenario: store.scenario,
      bundle_digest: bundle.digest,
      parent_digest: parent.digest,
      manifest_diff_digest: diff.digest,
    });
    const existing = readRecord(store, bundle.digest);
    if (existing) {
      if (existing.source_run_id === runId && existing.source_generation === generation)
        return result(false, existing.lifecycle);
      fail(
        'CANDIDATE_EXISTS',
        `bundle ${bundle.digest} was already proposed by run "${existing.source_run_id}" generation ` +
          `${existing.source_generation}; a digest cannot be rebound to another source`,
        {bundle_digest: bundle.digest},
      );
    }
    if (diff.changes.length === 0 && options.allowUnchanged !== true)
      fail(
        'CANDIDATE_UNCHANGED',
        `${source.origin} holds exactly the components of the active bundle ${parent.digest.slice(0, 12)}: ` +
          `nothing to evaluate (propose --allow-unchanged to propose it anyway)`,
        {bundle_digest: bundle.digest},
      );
    const at = isoTimestamp(now(options));
    // The diff first: a manifest with a parent and no candidate folder is then never a crash state (verify:
    // MISSING_CANDIDATE).
    writeManifestDiff(store, diff);
    writeBundle(store, bundle);
    const record: CandidateRecord = {
      schema_version: 2,
      bundle_digest: bundle.digest,
      parent_digest: parent.digest,
      evaluator_epoch: bundle.evaluator_epoch,
      lifecycle: 'proposed',
      source_run_id: runId,
      source_generation: generation,
      created_at: at,
      updated_at: at,
      rationale: options.rationale ?? '',
      comparison: null,
      confirmation_policy: null,
      confirmation_policy_digest: null,
    };
    writeRecord(store, record, 'propose');
    return result(true, 'proposed');
  });
}
