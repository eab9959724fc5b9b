import type {Dirent} from 'node:fs';
import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../errors.js';
import type {BundleOutline, ContextBundle} from '../model/bundle/bundle.js';
import type {ManifestDiff} from '../model/bundle/diff.js';
import type {BoundPlan} from '../model/evaluation/evaluator-plan.js';
import type {ConfirmationPolicy} from '../model/evaluation/policy.js';
import type {ActivePointer, CandidateRecord, PromotionRecord, RollbackRecord, RolloverRecord} from '../model/promotion/records.js';
import type {PointerHistory} from '../model/promotion/pointer-history.js';
import type {ComparisonSubject} from '../model/evaluation/comparison.js';
import type {MatchedTrial} from '../model/evaluation/trial.js';
import type {JsonValue} from '../canonical/index.js';
import {readDocument, requireDocument} from './documents.js';
import {isDirectory, listDir, readBytes, walkTree, type RootGuard, type TreeEntry} from './files/fs.js';
import {readGitignore} from './kinds/common/gitignore.js';
import * as active from './kinds/promotion/active-pointer.js';
import * as bundles from './kinds/bundle/bundle.js';
import * as campaigns from './kinds/evaluation/campaign-ledger.js';
import * as records from './kinds/promotion/candidate-record.js';
import * as recordHistory from './kinds/promotion/record-history.js';
import * as adoption from './kinds/promotion/history-adoption.js';
import type {AdoptionRead} from './kinds/promotion/history-adoption.js';
import type {RecordCause, RecordHistoryEntry} from '../model/promotion/record-history.js';
import type {KindContext} from './kinds/common/kind-context.js';
import * as plans from './kinds/evaluation/evaluator-plan.js';
import * as seals from './kinds/evaluation/evidence-seal.js';
import * as history from './kinds/promotion/history.js';
import * as diffs from './kinds/bundle/manifest-diff.js';
import * as evidence from './kinds/evaluation/matched-evidence.js';
import * as mirrors from './kinds/promotion/mirrors.js';
import * as runtime from './kinds/bundle/harness-runtime.js';
import * as negatives from './kinds/promotion/negative-result.js';
import * as markers from './kinds/promotion/terminal-markers.js';
import * as curations from './kinds/delivery/curation.js';
import * as handoffs from './kinds/delivery/handoff.js';
import type {Curation, CurationCause, CurationEntry, HandoffRevision} from '../model/delivery/curation.js';
import {backoffMs, pausePoint, removeAbandonedLock, StoreLock} from './files/lock.js';
import {LockedWriter} from './files/locked-writer.js';
import {leftoverKind, ScenarioPaths} from './paths.js';
import type {SchemaName} from './schemas.js';
import {StateArea} from './state-area.js';
import {updateGitignore} from './kinds/common/gitignore.js';
import {appendStateChange} from './kinds/signing/state-chain.js';
import {JOURNAL_FORMAT, readJournal, RunJournal, type JournalHeader, type JournalRead} from './kinds/evaluation/run-journal.js';
import path from 'node:path';

export type {MatchedEvidence} from './kinds/evaluation/matched-evidence.js';
export type {StoredCampaign} from './kinds/evaluation/campaign-ledger.js';
export type {StoredSeal} from './kinds/evaluation/evidence-seal.js';

/**
 * One scenario's context-bundle store: the document kinds of src/store/kinds,
 * bound to this scenario and its lock. Every write goes through the locked
 * writer, which refuses to run without the scenario lock and re-checks it
 * synchronously right before each rename.
 */
export class ScenarioStore implements KindContext {
  readonly paths: ScenarioPaths;
  readonly writer: LockedWriter;
  /** Signs the records that carry signatures (null: this use of the store signs nothing). */
  signer: ((kind: string, digest: string) => string) | null = null;
  /** The principal a signing store's state changes are chained as (signing/chain/; null: no chain entries). */
  chainActor: string | null = null;
  private lock: StoreLock | undefined;

  constructor(
    readonly guard: RootGuard,
    readonly scenario: string,
  ) {
    this.paths = new ScenarioPaths(guard.root, scenario);
    this.writer = new LockedWriter(guard, () => this.lock, `scenario "${scenario}"`);
  }

  // ---- locking ----

  /** Remove a lock in this scenario whose owner is provably gone (repair); true when removed. */
  removeAbandonedLock(file: string): boolean {
    this.guard.check(file);
    return removeAbandonedLock(file);
  }

  /**
   * Take the lock of one candidate's evaluation run and return its release.
   * Locks are taken in one order (scenario, campaign, run, state): the run
   * lock is claimed only while the scenario lock is held, and never waited
   * for under it. When another run holds it, the scenario lock is let go and
   * the claim is tried again, up to timeoutSeconds (then LOCKED, exit 7).
   * The run keeps it across the scenario lock's per-commit holds; since no
   * process waits for a run lock while holding the scenario lock, the two
   * cannot deadlock. The candidate's folder must exist.
   */
  async acquireRunLock(digest: string, timeoutSeconds: number): Promise<() => Promise<void>> {
    const file = this.paths.runLock(digest);
    this.guard.check(file);
    if (!isDirectory(this.paths.candidateDir(digest))) fail('INVALID_TRANSITION', `bundle ${digest} is not a proposed candidate (no candidate folder)`);
    const lock = new StoreLock(this.paths.candidateDir(digest), file);
    const deadline = Date.now() + Math.max(0, timeoutSeconds) * 1000;
    for (let attempt = 0; ; attempt++) {
      const left = Math.max(0, (deadline - Date.now()) / 1000);
      let claimed = false;
      try {
        claimed = await this.withLock(left, () => lock.tryAcquire());
      } catch (error) {
        await lock.releaseLock(); // claimed, then the scenario step failed: let the claim go too
        throw error;
      }
      if (claimed) return () => lock.releaseLock();
      if (Date.now() >= deadline) fail('LOCKED', `${lock.holderText(`candidate ${digest}'s evaluation run`)}; gave up after ${timeoutSeconds}s (see --lock-timeout)`, {lock: file});
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
    }
  }

  /**
   * The journal of a run of this candidate (only the run lock's holder may
   * call this), and the pairs an earlier
   * run left in it, not yet folded (null: none).
   */
  async openRunJournal(digest: string, planDigest: string, timeoutSeconds: number): Promise<{journal: RunJournal; pending: JournalRead | null}> {
    const area = new StateArea(this.guard);
    const header: JournalHeader = {format: JOURNAL_FORMAT, version: 1, candidate_digest: digest, plan_digest: planDigest};
    const file = path.join(area.file('runs', this.scenario), `${digest}.jsonl`);
    // Its folder is made before the first pair is appended: a run that records nothing leaves nothing.
    const journal = new RunJournal(this.guard, file, header, () => area.folder(timeoutSeconds, 'runs', this.scenario));
    return {journal, pending: readJournal(this.guard, file, header)};
  }

  /** Pairs of this candidate's run journal, not yet folded, under any plan (a rebind requires none). */
  journalPairs(digest: string, planDigest: string): number {
    const area = new StateArea(this.guard);
    const file = path.join(area.file('runs', this.scenario), `${digest}.jsonl`);
    const read = readJournal(this.guard, file, {format: JOURNAL_FORMAT, version: 1, candidate_digest: digest, plan_digest: planDigest});
    if (read === null) return 0;
    // A journal of another plan, or one that cannot be read, may still hold observations: counted as one.
    return read.refused !== null ? Math.max(1, read.trials.length) : read.trials.length;
  }

  /**
   * Run fn holding the scenario lock. After a step that succeeds, temporary
   * files an interrupted writer left in the folders this process wrote into
   * are removed (each folder once), and after the process's first such step
   * the root's .gitignore is brought up to date (under the state area's lock,
   * which comes after). A step that fails leaves both as they were. Nothing
   * here walks the tree: leftovers elsewhere are verify's to report
   * (LEFTOVER_TEMP) and repair's to remove.
   */
  async withLock<T>(timeoutSeconds: number, fn: () => T | Promise<T>): Promise<T> {
    const lock = new StoreLock(this.paths.lockTarget, this.paths.lock);
    this.guard.check(this.paths.contextDir);
    await lock.acquire({timeoutSeconds});
    this.lock = lock;
    pausePoint('scenario:locked');
    try {
      const result = await this.writer.transaction(async () => {
        // In a signed scenario every step that changed the state ends with its signed chain entry, also one that
        // ends in a refusal that keeps what it wrote (not exit 2 or 9, which put it back): what is on disk is chained.
        const chain = () => {
          if (this.signer && this.chainActor !== null) appendStateChange(this, this.chainActor, this.writer.stepFiles());
        };
        let value: T;
        try {
          value = await fn();
        } catch (error) {
          if (isAutoctxError(error) && error.exitCode !== 2 && error.exitCode !== 9 && error.exitCode !== 1) chain();
          throw error;
        }
        chain();
        return value;
      });
      // Housekeeping only after the step succeeded: a command that fails changes nothing, not even leftovers or the .gitignore.
      this.sweepLeftovers();
      if (!this.gitignoreChecked) {
        this.gitignoreChecked = true;
        await this.updateGitignore(timeoutSeconds);
      }
      return result;
    } finally {
      this.lock = undefined;
      await lock.releaseLock();
    }
  }

  /** True while this process holds the scenario lock. */
  get locked(): boolean {
    return this.lock !== undefined;
  }

  private gitignoreChecked = false;
  private readonly swept = new Set<string>();

  /**
   * Remove the temporary files an interrupted writer left in each folder this
   * process wrote into, once per folder: under the scenario lock no live
   * writer of this scenario has one.
   */
  private sweepLeftovers(): void {
    for (const dir of this.writer.folders) {
      if (this.swept.has(dir) || !dir.startsWith(this.paths.dir)) continue;
      this.swept.add(dir);
      for (const entry of listDir(this.guard, dir)) {
        // Every temp name ends so (tempPath): a folder of thousands of bundles costs one test a name.
        if (!entry.name.endsWith('.tmp') || !entry.isFile()) continue;
        const file = path.join(dir, entry.name);
        if (leftoverKind(file, 'file') === 'temp') this.writer.remove(file);
      }
    }
  }

  /** Add the rules the root's .gitignore lacks, when it has one. */
  private async updateGitignore(timeoutSeconds: number): Promise<void> {
    const state = readGitignore(this.guard);
    if (state === null || (state.removed.length === 0 && state.outdated.length === 0)) return;
    const area = new StateArea(this.guard);
    await area.withLock(timeoutSeconds, () => updateGitignore(area.writer, {create: false}));
  }

  // ---- bootstrap curation ----

  /** The curation in force (empty when the scenario has none). */
  readCuration(): Curation {
    return curations.currentCuration(this);
  }

  /** Under the lock: record a curation change (history entry, then curation.json); a change cut short earlier is completed first. */
  changeCuration(change: (current: Curation) => Omit<Curation, 'seq'>, cause: CurationCause, at: string): Curation {
    return curations.changeCuration(this, change, cause, at);
  }

  /** Under the lock: complete a curation change cut short; returns the curation then in force, and the entry completed. */
  settleCuration(): {curation: Curation; completed: CurationEntry | null} {
    return curations.settleCuration(this);
  }

  readCurationEntry(seq: number): CurationEntry | null {
    return curations.readCurationEntry(this, seq);
  }

  readHandoff(id: string, revision: number): HandoffRevision | null {
    return handoffs.readHandoff(this, id, revision);
  }

  handoffRevisions(id: string): number[] {
    return handoffs.listRevisions(this, id);
  }

  handoffIds(): string[] {
    return handoffs.listHandoffIds(this);
  }

  /** A handoff revision written beyond its head by a write cut short, or null. */
  pendingHandoff(curation: Curation, id: string): HandoffRevision | null {
    return handoffs.pendingRevision(this, curation, id);
  }

  /** Under the lock: write a handoff revision (immutable). */
  createHandoff(revision: HandoffRevision): void {
    handoffs.createHandoff(this, revision);
  }

  // ---- active pointer ----

  readActive(): ActivePointer | null {
    return active.readActive(this);
  }

  requireActive(): ActivePointer {
    const a = this.readActive();
    if (!a) fail('NOT_INITIALIZED', `scenario "${this.scenario}" has no active bundle; run autoctx init first`, {scenario: this.scenario});
    return a;
  }

  /** The digest of active.json as stored (null: none), for a compare-and-swap. */
  activeDigest(): string | null {
    return active.activeDigest(this);
  }

  /** Replace active.json only if it still has the digest `expected` (else ACTIVE_MOVED, exit 6). */
  swapActive(expected: string | null, pointer: ActivePointer): void {
    active.swapActive(this, expected, pointer);
  }

  // ---- bundles ----

  hasBundle(digest: string): boolean {
    return bundles.hasBundle(this, digest);
  }
  readBundle(digest: string): ContextBundle | null {
    return bundles.readBundle(this, digest);
  }
  /** verify: the outline of a manifest, re-hashed and checked (from its bytes when it is in the plain spelling). */
  readBundleOutline(digest: string): BundleOutline | null {
    return bundles.readBundleOutline(this, digest);
  }
  readBundleTexts(digest: string): ContextBundle | null {
    return bundles.readBundleTexts(this, digest);
  }
  requireBundle(digest: string): ContextBundle {
    const b = this.readBundle(digest);
    if (!b) fail('DIGEST_NOT_FOUND', `no bundle ${digest} in scenario "${this.scenario}"`, {digest});
    return b;
  }
  /** The manifest, then its harness validators' runtime files (which derive from it). */
  writeBundle(bundle: ContextBundle): boolean {
    const created = bundles.writeBundle(this, bundle);
    runtime.writeHarnessRuntime(this, bundle);
    return created;
  }
  /** Write a stored bundle's missing or differing runtime files; the keys written. */
  writeHarnessRuntime(bundle: ContextBundle): string[] {
    return runtime.writeHarnessRuntime(this, bundle);
  }
  listBundleDigests(): string[] {
    return bundles.listBundleDigests(this);
  }
  /** The stored size of these manifests in bytes (links not followed, never read), to decide how to check them. */
  manifestBytes(digests: readonly string[]): number {
    return bundles.manifestBytes(this, digests);
  }

  // ---- candidate records ----

  readRecord(digest: string): CandidateRecord | null {
    return records.readRecord(this, digest);
  }
  /**
   * Replace a record, recording the change in its history first. Returns the
   * record written: the one given, or, when a run cut short after its entry
   * is run again and reaches the same change, the entry's (with its times).
   */
  writeRecord(record: CandidateRecord, cause: RecordCause): CandidateRecord {
    return records.writeRecord(this, record, cause);
  }
  /** A candidate's record history, oldest first (empty when it keeps none). */
  readRecordHistory(digest: string): RecordHistoryEntry[] {
    return recordHistory.readRecordHistory(this, digest);
  }
  /** Since when the scenario keeps record histories; null before autoctx first wrote a record here. */
  readHistoryAdoption(): AdoptionRead {
    return adoption.readAdoption(this);
  }
  /** Where a record stands against its history, given the scenario's adoption (read once by the caller). */
  recordHistoryState(digest: string, record: CandidateRecord | null, adopted: AdoptionRead): recordHistory.HistoryState {
    return recordHistory.historyState(this, digest, record, adopted);
  }
  /** Complete a change its history holds and record.json does not (a write cut short). */
  completeRecordFromHistory(entry: RecordHistoryEntry): void {
    records.putRecord(this, entry.record);
  }
  /** Start the history of a record found without one where the scenario keeps histories. */
  adoptRecord(record: CandidateRecord): void {
    void recordHistory.adoptRecord(this, record);
  }
  listCandidateDigests(): string[] {
    return records.listCandidateDigests(this);
  }

  // ---- manifest diffs ----

  readManifestDiff(digest: string): ManifestDiff | null {
    return diffs.readManifestDiff(this, digest);
  }
  writeManifestDiff(diff: ManifestDiff): boolean {
    return diffs.writeManifestDiff(this, diff);
  }

  // ---- matched evidence and its seal ----

  readEvidence(digest: string): evidence.MatchedEvidence | null {
    return evidence.readEvidence(this, digest);
  }
  writeEvidence(digest: string, trials: readonly MatchedTrial[], policy: ConfirmationPolicy): void {
    evidence.writeEvidence(this, digest, trials, policy);
  }
  writeEvidenceSeal(digest: string, trials: readonly MatchedTrial[], planBinding: string | null, digestOf?: (t: MatchedTrial) => string): void {
    seals.writeEvidenceSeal(this, digest, trials, planBinding, digestOf);
  }
  /** Why the evidence cannot be trusted against its seal and the plan bound now, or null. */
  /** Why recorded evidence is not what autoctx could have produced (matched-evidence.ts); every command acting on evidence asks. */
  evidenceProblem(subject: ComparisonSubject, recorded: evidence.MatchedEvidence, plan: BoundPlan | null, record: CandidateRecord | null): string | null {
    return evidence.evidenceProblem(this, subject, recorded, plan, record);
  }
  sealProblem(digest: string, trials: readonly MatchedTrial[], plan: BoundPlan | null): string | null {
    return seals.sealProblem(this, digest, trials, plan);
  }
  readEvidenceSeal(digest: string): seals.StoredSeal | null {
    return seals.readEvidenceSeal(this, digest);
  }

  // ---- evaluator plan ----

  readPlan(digest: string): BoundPlan | null {
    return plans.readPlan(this, digest);
  }
  writePlan(plan: BoundPlan): boolean {
    return plans.writePlan(this, plan);
  }
  rebindPlan(old: BoundPlan, next: BoundPlan): void {
    plans.rebindPlan(this, old, next);
  }
  listSupersededPlans(digest: string): string[] {
    return plans.listSupersededPlans(this, digest);
  }
  /** True when evaluator_plan.json still holds exactly these bytes (a stat, then a read only when the file moved). */
  planHolds(digest: string, text: string): boolean {
    return plans.planHolds(this, digest, text);
  }

  readPlanText(digest: string): string | null {
    return plans.readPlanText(this, digest);
  }

  // ---- negative results, stale markers, causal attribution ----

  readNegativeResult(digest: string): Record<string, unknown> | null {
    return negatives.readNegativeResult(this, digest);
  }
  readNegativeLedgerCopy(digest: string): Record<string, unknown> | null {
    return negatives.readNegativeLedgerCopy(this, digest);
  }
  writeNegativeResult(digest: string, doc: Record<string, unknown>): Record<string, unknown> {
    return negatives.writeNegativeResult(this, digest, doc);
  }
  writeStaleTerminalization(digest: string, doc: Record<string, unknown>): boolean {
    return markers.writeStaleTerminalization(this, digest, doc);
  }
  readStaleTerminalization(digest: string): Record<string, unknown> | null {
    return markers.readStaleTerminalization(this, digest);
  }
  readCausalAttribution(digest: string): Record<string, unknown> | null {
    return markers.readCausalAttribution(this, digest);
  }
  writeCausalAttribution(digest: string, doc: Record<string, unknown>): boolean {
    return markers.writeCausalAttribution(this, digest, doc);
  }

  // ---- campaign ledgers (guarded by the scenario lock: a campaign lives in one scenario store) ----

  readCampaign(campaignId: string): campaigns.StoredCampaign | null {
    return campaigns.readCampaign(this, campaignId);
  }
  writeCampaign(state: campaigns.StoredCampaign): void {
    campaigns.writeCampaign(this, state);
  }
  writeReservationArtifact(campaignId: string, digest: string, artifact: Record<string, unknown>): boolean {
    return campaigns.writeReservationArtifact(this, campaignId, digest, artifact);
  }

  // ---- promotions and rollbacks ----

  listPromotionIds(): string[] {
    return history.listPromotionIds(this);
  }
  readPromotion(id: string): PromotionRecord | null {
    return history.readPromotion(this, id);
  }
  writePromotion(record: PromotionRecord): boolean {
    return history.writePromotion(this, record);
  }
  listRollbackIds(): string[] {
    return history.listRollbackIds(this);
  }
  readRollback(id: string): RollbackRecord | null {
    return history.readRollback(this, id);
  }
  writeRollback(record: RollbackRecord): boolean {
    return history.writeRollback(this, record);
  }
  listRolloverIds(): string[] {
    return history.listRolloverIds(this);
  }
  readRollover(id: string): RolloverRecord | null {
    return history.readRollover(this, id);
  }
  writeRollover(record: RolloverRecord): boolean {
    return history.writeRollover(this, record);
  }
  /** Why the pointer is not what its recorded history wrote (null: it is); every move checks it first. */
  pointerProblem(pointer: ActivePointer): string | null {
    return active.pointerProblem(this, pointer);
  }
  pointerHistory(pointer: ActivePointer): PointerHistory {
    return active.pointerHistory(this, pointer);
  }

  // ---- mirrors for people and legacy readers ----

  writeMirrors(bundle: ContextBundle): void {
    mirrors.writeMirrors(this, bundle);
  }
  readMirror(name: mirrors.MirrorName): string | null {
    return mirrors.readMirror(this, name);
  }

  // ---- generic access for verify ----

  readDocumentAt<T>(file: string, schema: SchemaName | SchemaName[], check?: (value: JsonValue) => T): T | null {
    return readDocument<T>(this.guard, file, schema, check);
  }

  requireDocumentAt<T>(file: string, schema: SchemaName | SchemaName[], check?: (value: JsonValue) => T): T {
    return requireDocument<T>(this.guard, file, schema, check);
  }

  /** Remove a temporary file or a dead lock folder left by an interrupted run. */
  removeLeftover(file: string): void {
    this.writer.remove(file);
  }

  readText(file: string): string | null {
    return readBytes(this.guard, file)?.toString('utf8') ?? null;
  }

  /** Every entry of the scenario folder, links not followed. */
  walk(listings?: Map<string, Dirent[]>): TreeEntry[] {
    return walkTree(this.guard, this.paths.dir, listings);
  }

  /** Where a path really leads, to tell links inside the root from links out of it. */
  linkStaysInside(file: string): boolean {
    try {
      this.guard.check(file);
      return true;
    } catch (error) {
      rethrowUnless(error, isAutoctxError, isSystemError);
      return false;
    }
  }
}
