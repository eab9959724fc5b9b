import {fail} from '../../errors.js';
import {isoTimestamp, type ActivePointer, type CandidateRecord} from '../../model/promotion/records.js';
import {checkServeable} from '../../model/bundle/serveability.js';
import {assertScenarioName, KnowledgeStore, knowledgeRootFrom, readSource} from '../../store/index.js';
import {bundleFromSource, verifySourceDigests} from '../bundle/build.js';
import {lockTimeout, now, type StoreOptions} from './store-options.js';
import {movePointer} from '../promotion/pointer-move.js';
import {readActive} from '../../store/kinds/promotion/active-pointer.js';
import {readRecord, writeRecord} from '../../store/kinds/promotion/candidate-record.js';
import {writeMirrors} from '../../store/kinds/promotion/mirrors.js';
import {writeBundle} from '../../store/kinds/bundle/bundle.js';

export const DEFAULT_EPOCH = 'epoch-1';

export interface InitOptions extends StoreOptions {
  scenario: string;
  from: string;
  evaluatorEpoch?: string | undefined;
}

export interface InitResult {
  status: 'initialized';
  created: boolean;
  scenario: string;
  bundle_digest: string;
  evaluator_epoch: string;
  knowledge: string;
}

/**
 * Create the scenario's store with a parentless baseline bundle as the active
 * one. Running it again with the same material is a no-op; with other material
 * on an initialized scenario it is refused.
 */
export async function init(options: InitOptions): Promise<InitResult> {
  assertScenarioName(options.scenario);
  const source = readSource(options.from);
  verifySourceDigests(source);
  if (source.header) {
    if (source.header.scenario !== options.scenario)
      fail(
        'LINEAGE_MISMATCH',
        `${source.origin} is for scenario "${source.header.scenario}", not "${options.scenario}"`,
      );
    if (source.header.parent_digest !== null)
      fail('LINEAGE_MISMATCH', `${source.origin}: a baseline bundle has no parent (parent_digest must be null)`);
    if (options.evaluatorEpoch !== undefined && options.evaluatorEpoch !== source.header.evaluator_epoch) {
      fail(
        'LINEAGE_MISMATCH',
        `${source.origin} has evaluator epoch "${source.header.evaluator_epoch}", not "${options.evaluatorEpoch}"`,
      );
    }
  }
  const bundle = bundleFromSource(source, {
    scenario: options.scenario,
    evaluator_epoch: options.evaluatorEpoch ?? DEFAULT_EPOCH,
    parent_digest: null,
  });
  checkServeable(bundle, null);
  const timeout = lockTimeout(options);
  const knowledge = KnowledgeStore.create(knowledgeRootFrom(options.knowledge));
  knowledge.assertNoTwin(options.scenario); // (a root just created has no other scenario)
  const store = knowledge.scenario(options.scenario);
  const result = (created: boolean): InitResult => ({
    status: 'initialized',
    created,
    scenario: options.scenario,
    bundle_digest: bundle.digest,
    evaluator_epoch: bundle.evaluator_epoch,
    knowledge: knowledge.root,
  });
  return store.withLock(timeout, async () => {
    const active = readActive(store);
    if (active) {
      const record = readRecord(store, bundle.digest);
      if (record && record.parent_digest === null && record.source_run_id === '' && record.source_generation === 0) {
        // A re-run after a crash between the pointer and the mirrors brings them in line.
        if (active.bundle_digest === bundle.digest) writeMirrors(store, bundle);
        await knowledge.ensureGitignore(timeout, {create: true});
        await knowledge.ensureGitattributes(timeout, {create: true});
        return result(false);
      }
      fail(
        'ALREADY_INITIALIZED',
        `scenario "${options.scenario}" is already initialized (active bundle ${active.bundle_digest}); ` +
          `use autoctx propose for a new bundle`,
      );
    }
    const at = isoTimestamp(now(options));
    writeBundle(store, bundle);
    const record: CandidateRecord = {
      schema_version: 2,
      bundle_digest: bundle.digest,
      parent_digest: null,
      evaluator_epoch: bundle.evaluator_epoch,
      lifecycle: 'active',
      source_run_id: '',
      source_generation: 0,
      created_at: at,
      updated_at: at,
      rationale: 'baseline bundle',
      comparison: null,
      confirmation_policy: null,
      confirmation_policy_digest: null,
    };
    const kept = writeRecord(store, readRecord(store, bundle.digest) ?? record, 'init');
    const pointer: ActivePointer = {
      schema_version: 1,
      bundle_digest: bundle.digest,
      evaluator_epoch: bundle.evaluator_epoch,
      promotion_id: null,
      rollback_target_digest: null,
      // the init's time is its record's, so a re-run after a crash writes the same pointer
      activated_at: kept.created_at,
      rationale: 'baseline bundle',
    };
    movePointer(store, {expected: null, pointer, bundle, at: now(options)});
    // The root's .gitignore is a root-level document, under the state area's lock (taken after this one).
    await knowledge.ensureGitignore(timeout, {create: true});
    // So is the .gitattributes: byte-exact checkouts, and no silent merge of a mutable document.
    await knowledge.ensureGitattributes(timeout, {create: true});
    return result(true);
  });
}
