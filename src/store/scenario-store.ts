import {fail} from '../errors.js';
import {validateBundle, type ContextBundle} from '../model/bundle.js';
import {manifestDiffDigest, type ManifestDiff} from '../model/diff.js';
import {campaignStateDigest, evaluatorPlanDigest, legacyCampaignStateDigest} from '../model/evidence-digests.js';
import type {CampaignFalsePromotionState} from '../model/campaign.js';
import type {EvaluatorPlan} from '../model/evaluator-plan.js';
import {confirmationPolicyDigest, validateConfirmationPolicy, type ConfirmationPolicy} from '../model/policy.js';
import {type ActivePointer, type CandidateRecord, type PromotionRecord, type RollbackRecord} from '../model/records.js';
import {compareWithSeal, evidenceSeal, matchedTrialFromDict, sortEvidence, type MatchedTrial, type SealComparison} from '../model/trial.js';
import {readDocument, requireDocument, writeDocument, writeImmutableDocument} from './documents.js';
import {atomicWrite, exists, listDir, readBytes, removeFile, walkTree, type TreeEntry, type RootGuard, type WriteOptions} from './fs.js';
import {StoreLock} from './lock.js';
import {ScenarioPaths, TEMP_FILE} from './paths.js';
import path from 'node:path';
import type {SchemaName} from './schemas.js';
import type {JsonValue} from '../canonical/index.js';

const HEX64 = /^[0-9a-f]{64}$/;

/** A campaign ledger as stored: schema 2, or a readable schema-1 ledger without fixture history. */
export type StoredCampaign = Omit<CampaignFalsePromotionState, 'schema_version'> & {schema_version: 1 | 2};

/** A candidate's recorded evidence. A legacy (schema-1) array has no bound policy. */
export interface MatchedEvidence {
  legacy: boolean;
  trials: MatchedTrial[];
  confirmation_policy: ConfirmationPolicy | null;
  confirmation_policy_digest: string | null;
}

/**
 * One scenario's context-bundle store: typed readers and writers for every file
 * kind. Writers require the scenario lock and check it synchronously right
 * before each rename.
 */
export class ScenarioStore {
  readonly paths: ScenarioPaths;
  private lock: StoreLock | undefined;

  constructor(
    readonly guard: RootGuard,
    readonly scenario: string,
  ) {
    this.paths = new ScenarioPaths(guard.root, scenario);
  }

  get initialized(): boolean {
    return exists(this.paths.active);
  }

  // ---- locking ----

  async withLock<T>(timeoutSeconds: number, fn: () => T | Promise<T>): Promise<T> {
    const lock = new StoreLock(this.paths.lockTarget, this.paths.lock);
    this.guard.check(this.paths.contextDir);
    await lock.acquire({timeoutSeconds});
    this.lock = lock;
    try {
      if (!this.swept) this.sweepLeftovers();
      return await fn();
    } finally {
      this.lock = undefined;
      await lock.releaseLock();
    }
  }

  private swept = false;

  /**
   * Remove temporary files an interrupted writer left (they are only ever
   * created under this lock, so none belongs to a live writer). Once per
   * process, on its first lock.
   */
  private sweepLeftovers(): void {
    this.swept = true;
    for (const entry of walkTree(this.guard, this.paths.dir)) {
      if (entry.kind === 'file' && TEMP_FILE.test(path.basename(entry.path))) removeFile(this.guard, entry.path, this.write);
    }
  }

  private get write(): WriteOptions {
    const lock = this.lock;
    if (!lock) throw new Error('internal: store write without the scenario lock');
    return {beforePublish: () => lock.assertHeld()};
  }

  // ---- active pointer ----

  readActive(): ActivePointer | null {
    return readDocument<ActivePointer>(this.guard, this.paths.active, 'active');
  }

  requireActive(): ActivePointer {
    const a = this.readActive();
    if (!a) fail('NOT_INITIALIZED', `scenario "${this.scenario}" has no active bundle; run autoctx init first`, {scenario: this.scenario});
    return a;
  }

  writeActive(pointer: ActivePointer): void {
    writeDocument(this.guard, this.paths.active, 'active', pointer, this.write);
  }

  // ---- bundles ----

  hasBundle(digest: string): boolean {
    return exists(this.paths.bundle(digest));
  }

  readBundle(digest: string): ContextBundle | null {
    return readDocument(this.guard, this.paths.bundle(digest), {implied: 'manifest'}, (value) => {
      const bundle = validateBundle(value);
      if (bundle.digest !== digest) fail('DIGEST_MISMATCH', `file name says ${digest} but the manifest digest is ${bundle.digest}`);
      return bundle;
    });
  }

  requireBundle(digest: string): ContextBundle {
    const b = this.readBundle(digest);
    if (!b) fail('DIGEST_NOT_FOUND', `no bundle ${digest} in scenario "${this.scenario}"`, {digest});
    return b;
  }

  writeBundle(bundle: ContextBundle): boolean {
    return writeImmutableDocument(this.guard, this.paths.bundle(bundle.digest), 'manifest', bundle, this.write);
  }

  listBundleDigests(): string[] {
    return listDir(this.guard, this.paths.bundlesDir)
      .filter((e) => e.isFile() && e.name.endsWith('.json') && HEX64.test(e.name.slice(0, -5)))
      .map((e) => e.name.slice(0, -5));
  }

  // ---- candidate records ----

  readRecord(digest: string): CandidateRecord | null {
    return readDocument<CandidateRecord>(this.guard, this.paths.record(digest), ['record-v2', 'record-v1'], (value) => {
      const r = value as unknown as CandidateRecord;
      if (r.bundle_digest !== digest) fail('DIGEST_MISMATCH', `record names bundle ${r.bundle_digest} but lives under ${digest}`);
      return r;
    });
  }

  /**
   * Replace a record. Its directory is not fsynced: a record lost in a crash is
   * rebuilt from the evidence, which is durable before the record is written.
   */
  writeRecord(record: CandidateRecord): void {
    writeDocument(this.guard, this.paths.record(record.bundle_digest), record.schema_version === 1 ? 'record-v1' : 'record-v2', record, {...this.write, lazyDirectory: true});
  }

  listCandidateDigests(): string[] {
    return listDir(this.guard, this.paths.candidatesDir)
      .filter((e) => e.isDirectory() && HEX64.test(e.name))
      .map((e) => e.name);
  }

  // ---- manifest diffs ----

  readManifestDiff(digest: string): ManifestDiff | null {
    return readDocument<ManifestDiff>(this.guard, this.paths.manifestDiff(digest), 'manifest-diff', (value) => {
      const d = value as unknown as ManifestDiff;
      if (manifestDiffDigest(d) !== d.digest) fail('DIGEST_MISMATCH', `manifest diff digest mismatch: recorded ${d.digest}`);
      return d;
    });
  }

  writeManifestDiff(diff: ManifestDiff): boolean {
    return writeImmutableDocument(this.guard, this.paths.manifestDiff(diff.tested_bundle_digest), 'manifest-diff', diff, this.write);
  }

  // ---- matched evidence (schema-2 envelope, or the legacy array) ----

  readEvidence(digest: string): MatchedEvidence | null {
    return readDocument<MatchedEvidence>(this.guard, this.paths.matchedTrials(digest), ['matched-trials', 'matched-trials-legacy'], (value) => {
      if (Array.isArray(value)) {
        const trials = value.map((row) => matchedTrialFromDict(row, {allowLegacyKey: true}));
        const keys = new Set<string>();
        for (const t of trials) {
          if (keys.has(t.pair_key)) fail('INVALID_INPUT', 'legacy rows collapse to a duplicate current pair identity');
          keys.add(t.pair_key);
        }
        return {legacy: true, trials, confirmation_policy: null, confirmation_policy_digest: null};
      }
      const doc = value as unknown as {trials: unknown[]; confirmation_policy: ConfirmationPolicy; confirmation_policy_digest: string};
      const policy = validateConfirmationPolicy(doc.confirmation_policy);
      if (confirmationPolicyDigest(policy) !== doc.confirmation_policy_digest) fail('DIGEST_MISMATCH', 'confirmation_policy_digest does not match the policy');
      const trials = doc.trials.map((row) => matchedTrialFromDict(row));
      const keys = new Set<string>();
      for (const t of trials) {
        if (t.candidate_digest !== digest) fail('INVALID_INPUT', `a trial is for candidate ${t.candidate_digest}`);
        if (keys.has(t.pair_key)) fail('INVALID_INPUT', 'duplicate matched trial pair');
        keys.add(t.pair_key);
      }
      return {legacy: false, trials, confirmation_policy: policy, confirmation_policy_digest: doc.confirmation_policy_digest};
    });
  }

  /** Replace the envelope atomically: trials sorted by (lane, pair_key), with the policy and its digest. */
  writeEvidence(digest: string, trials: readonly MatchedTrial[], policy: ConfirmationPolicy): void {
    const envelope = {schema_version: 2, trials: sortEvidence(trials), confirmation_policy: policy, confirmation_policy_digest: confirmationPolicyDigest(policy)};
    writeDocument(this.guard, this.paths.matchedTrials(digest), 'matched-trials', envelope, this.write);
  }

  /**
   * The seal beside the evidence: the digest of every trial as recorded, so that
   * a change to any score is found even where it moves no replayed statistic.
   * Written when a run ends (not after every pair); trials recorded since the
   * last seal are reported by verify and sealed by the next run or by repair.
   */
  writeEvidenceSeal(digest: string, trials: readonly MatchedTrial[]): void {
    writeDocument(this.guard, this.paths.evidenceSeal(digest), 'evidence-seal', evidenceSeal(digest, trials), this.write);
  }

  /** How the evidence stands against its seal (null: no seal). */
  sealStatus(digest: string, trials: readonly MatchedTrial[]): SealComparison | null {
    const seal = this.readEvidenceSeal(digest);
    return seal ? compareWithSeal(seal, trials) : null;
  }

  readEvidenceSeal(digest: string): Record<string, string> | null {
    return readDocument(this.guard, this.paths.evidenceSeal(digest), 'evidence-seal', (value) => {
      const seal = value as unknown as {candidate_digest: string; trial_digests: Record<string, string>};
      if (seal.candidate_digest !== digest) fail('INVALID_INPUT', `the evidence seal is for candidate ${seal.candidate_digest}`);
      return seal.trial_digests;
    });
  }

  // ---- evaluator plan ----

  readPlan(digest: string): EvaluatorPlan | null {
    return readDocument<EvaluatorPlan>(this.guard, this.paths.evaluatorPlan(digest), 'evaluator-plan', (value) => {
      const p = value as unknown as EvaluatorPlan;
      if (evaluatorPlanDigest(p.plan) !== p.plan_digest) fail('DIGEST_MISMATCH', 'plan_digest does not match the plan');
      if (p.plan.candidate_digest !== digest) fail('INVALID_INPUT', `the plan is for candidate ${p.plan.candidate_digest}`);
      return p;
    });
  }

  writePlan(plan: EvaluatorPlan): boolean {
    return writeImmutableDocument(this.guard, this.paths.evaluatorPlan(plan.plan.candidate_digest), 'evaluator-plan', plan, this.write);
  }

  // ---- negative results, stale markers, causal attribution ----

  readNegativeResult(digest: string): Record<string, unknown> | null {
    return readDocument<Record<string, unknown>>(this.guard, this.paths.negativeResult(digest), 'negative-result');
  }

  /**
   * Write negative_result.json once (an existing one is kept: it is immutable and
   * its timestamps would differ) and its discoverable copy, equal to it.
   */
  writeNegativeResult(digest: string, doc: Record<string, unknown>): Record<string, unknown> {
    const existing = this.readNegativeResult(digest);
    const kept = existing ?? doc;
    if (!existing) writeImmutableDocument(this.guard, this.paths.negativeResult(digest), 'negative-result', kept, this.write);
    writeImmutableDocument(this.guard, this.paths.negativeLedger(digest), 'negative-result', kept, this.write);
    return kept;
  }

  writeStaleTerminalization(digest: string, doc: Record<string, unknown>): boolean {
    return writeImmutableDocument(this.guard, this.paths.staleTerminalization(digest), 'stale-terminalization', doc, this.write);
  }

  readStaleTerminalization(digest: string): Record<string, unknown> | null {
    return readDocument<Record<string, unknown>>(this.guard, this.paths.staleTerminalization(digest), 'stale-terminalization');
  }

  writeCausalAttribution(digest: string, doc: Record<string, unknown>): boolean {
    return writeImmutableDocument(this.guard, this.paths.causalAttribution(digest), 'causal-attribution', doc, this.write);
  }

  writePromotion(record: PromotionRecord): boolean {
    return writeImmutableDocument(this.guard, this.paths.promotion(record.promotion_id), 'promotion', record, this.write);
  }

  // ---- campaign ledgers (guarded by the scenario lock: a campaign lives in one scenario store) ----

  readCampaign(campaignId: string): StoredCampaign | null {
    return readDocument<StoredCampaign>(this.guard, this.paths.campaignLedger(campaignId), 'false-promotion', (value) => {
      const l = value as unknown as StoredCampaign;
      if (l.campaign_id !== campaignId) fail('INVALID_INPUT', `the ledger is for campaign ${JSON.stringify(l.campaign_id)}`);
      const expected = l.schema_version === 2 ? campaignStateDigest(l) : legacyCampaignStateDigest(l);
      if (expected !== l.state_digest) fail('DIGEST_MISMATCH', 'state_digest does not match the ledger');
      return l;
    });
  }

  writeCampaign(state: StoredCampaign): void {
    writeDocument(this.guard, this.paths.campaignLedger(state.campaign_id), 'false-promotion', state, this.write);
  }

  writeReservationArtifact(campaignId: string, digest: string, artifact: Record<string, unknown>): boolean {
    return writeImmutableDocument(this.guard, this.paths.reservationArtifact(campaignId, digest), 'reservation-artifact', artifact, this.write);
  }

  // ---- promotions and rollbacks ----

  listPromotionIds(): string[] {
    return listDir(this.guard, this.paths.promotionsDir)
      .filter((e) => e.isFile() && /^[0-9a-f]{32}\.json$/.test(e.name))
      .map((e) => e.name.slice(0, -5));
  }

  readPromotion(id: string): PromotionRecord | null {
    return readDocument<PromotionRecord>(this.guard, this.paths.promotion(id), 'promotion', (value) => {
      const p = value as unknown as PromotionRecord;
      if (p.promotion_id !== id) fail('DIGEST_MISMATCH', `promotion record names id ${p.promotion_id} but is stored as ${id}`);
      return p;
    });
  }

  listRollbackIds(): string[] {
    return listDir(this.guard, this.paths.rollbacksDir)
      .filter((e) => e.isFile() && /^[0-9a-f]{32}\.json$/.test(e.name))
      .map((e) => e.name.slice(0, -5));
  }

  readRollback(id: string): RollbackRecord | null {
    return readDocument<RollbackRecord>(this.guard, this.paths.rollback(id), 'rollback', (value) => {
      const r = value as unknown as RollbackRecord;
      if (r.rollback_id !== id) fail('DIGEST_MISMATCH', `rollback record names id ${r.rollback_id} but is stored as ${id}`);
      return r;
    });
  }

  writeRollback(record: RollbackRecord): boolean {
    return writeImmutableDocument(this.guard, this.paths.rollback(record.rollback_id), 'rollback', record, this.write);
  }

  // ---- mirrors for people and legacy readers ----

  /** playbook.md and hints.md mirror the active bundle's playbook/playbook and hints/hints. */
  writeMirrors(bundle: ContextBundle): void {
    for (const name of ['playbook', 'hints'] as const) {
      const c = bundle.components.find((x) => x.kind === name && x.key === name);
      if (c) atomicWrite(this.guard, this.paths.mirror(name), `${c.content.trimEnd()}\n`, this.write);
      else if (exists(this.paths.mirror(name))) removeFile(this.guard, this.paths.mirror(name), this.write);
    }
  }

  // ---- generic access for the other file kinds and for verify ----

  readDocumentAt<T>(file: string, schema: SchemaName | SchemaName[], check?: (value: JsonValue) => T): T | null {
    return readDocument<T>(this.guard, file, schema, check);
  }

  requireDocumentAt<T>(file: string, schema: SchemaName | SchemaName[], check?: (value: JsonValue) => T): T {
    return requireDocument<T>(this.guard, file, schema, check);
  }

  /** Remove a temporary file or a dead lock folder left by an interrupted run. */
  removeLeftover(file: string): void {
    removeFile(this.guard, file, this.write);
  }

  readText(file: string): string | null {
    return readBytes(this.guard, file)?.toString('utf8') ?? null;
  }

  /** Every entry of the scenario folder, links not followed. */
  walk(): TreeEntry[] {
    return walkTree(this.guard, this.paths.dir);
  }

  /** Where a path really leads, to tell links inside the root from links out of it. */
  linkStaysInside(file: string): boolean {
    try {
      this.guard.check(file);
      return true;
    } catch {
      return false;
    }
  }
}
