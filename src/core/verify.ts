import path from 'node:path';
import {jsonEqual} from '../canonical/index.js';
import {isAutoctxError, type ErrorCode, type VerifyErrorFinding, type VerifyWarningFinding} from '../errors.js';
import {type ContextBundle} from '../model/bundle.js';
import {manifestDiffBody, sameDiffBody, type ManifestDiff} from '../model/diff.js';
import {campaignStateDigest, evaluatorPlanDigest, legacyCampaignStateDigest, reservationArtifactDigest} from '../model/evidence-digests.js';
import {confirmationPolicyDigest, type ConfirmationPolicy} from '../model/policy.js';
import {type ActivePointer, type CandidateRecord} from '../model/records.js';
import {compareWithSeal, legacyPairKey, matchedTrialPairKey, type MatchedTrial} from '../model/trial.js';
import {campaignSegment, type ScenarioStore} from '../store/index.js';
import {type TreeEntry} from '../store/fs.js';
import {TEMP_FILE} from '../store/paths.js';
import {openKnowledge, type StoreOptions} from './context.js';
import {rollbackId} from './rollback.js';
import {replayCandidate} from './replay.js';
import {checkManifest, checkManifests, manifestOutline, type BundleOutline, type ManifestCheck} from './verify-manifests.js';

export interface VerifyIssue {
  severity: 'error' | 'warning';
  code: string;
  file: string;
  message: string;
}

export interface VerifyResult {
  status: 'ok' | 'failed';
  scenarios: string[];
  files_checked: number;
  bundles_checked: number;
  errors: VerifyIssue[];
  warnings: VerifyIssue[];
}

/** Collects problems for one scenario; every check runs even after a failure. */
class Checker {
  readonly errors: VerifyIssue[] = [];
  readonly warnings: VerifyIssue[] = [];
  readonly bundles = new Map<string, BundleOutline>();

  constructor(
    readonly store: ScenarioStore,
    readonly replayTolerance = false,
  ) {}

  rel(file: string): string {
    return path.relative(this.store.guard.root, file);
  }

  private tree: TreeEntry[] | undefined;

  /** The scenario's entries, walked once per verify. */
  entries(): TreeEntry[] {
    if (!this.tree) {
      this.tree = this.store.walk();
      this.store.guard.useSnapshot(this.store.paths.dir, this.tree.filter((e) => e.kind === 'file').map((e) => e.path));
    }
    return this.tree;
  }

  error(file: string, code: VerifyErrorFinding | ErrorCode, message: string): void {
    this.errors.push({severity: 'error', code, file: this.rel(file), message});
  }

  warn(file: string, code: VerifyWarningFinding, message: string): void {
    this.warnings.push({severity: 'warning', code, file: this.rel(file), message});
  }

  /** The files a check found (read, or refused); a file read by several checks counts once. */
  private readonly checked = new Set<string>();

  get filesChecked(): number {
    return this.checked.size;
  }

  /** Run a read (or a check of a file's content); a typed failure becomes an error entry and the result undefined. */
  attempt<T>(file: string, fn: () => T): T | undefined {
    try {
      const result = fn();
      if (result !== null) this.checked.add(file); // null: the file does not exist
      return result;
    } catch (error) {
      this.checked.add(file);
      if (!isAutoctxError(error)) throw error;
      const message = error.message.startsWith(this.rel(file)) ? error.message : `${this.rel(file)}: ${error.message}`;
      this.error(file, (error.data?.reason as ErrorCode | undefined) ?? error.code, message); // the reader's own code
      return undefined;
    }
  }

  bundle(digest: string | null | undefined): BundleOutline | undefined {
    if (!digest) return undefined;
    return this.bundles.get(digest);
  }
}

function checkTree(c: Checker): void {
  const {store} = c;
  for (const entry of c.entries()) {
    const name = path.basename(entry.path);
    if (entry.kind === 'symlink') {
      if (store.linkStaysInside(entry.path)) c.warn(entry.path, 'SYMLINK', `${c.rel(entry.path)} is a symbolic link; autoctx never writes links`);
      else c.error(entry.path, 'UNSAFE_PATH', `${c.rel(entry.path)} is a symbolic link that leads outside the knowledge root`);
    } else if (entry.kind === 'file' && (TEMP_FILE.test(name) || name.endsWith('.tmp'))) {
      c.warn(entry.path, 'LEFTOVER_TEMP', `${c.rel(entry.path)} is a temporary file left by an interrupted write; it can be removed`);
    } else if (entry.kind === 'dir' && /^autoctx\.lock(\.stale-[0-9a-f]+)?$/.test(name)) {
      c.warn(entry.path, 'LEFTOVER_LOCK', `${c.rel(entry.path)} is a lock left behind or still held; the next writer takes it over if its owner is gone`);
    }
  }
}

function checkBundles(c: Checker, manifests: readonly ManifestCheck[]): void {
  for (const check of manifests) {
    const {digest} = check;
    const b = c.attempt(c.store.paths.bundle(digest), () => manifestOutline(check));
    if (!b) continue;
    if (b.scenario !== c.store.scenario) c.warn(c.store.paths.bundle(digest), 'SCENARIO_LABEL', `bundle ${digest} is labelled for scenario "${b.scenario}"`);
    c.bundles.set(digest, b);
  }
}

function checkPolicy(c: Checker, file: string, policy: ConfirmationPolicy | null | undefined, digest: string | null | undefined): void {
  if (policy == null && digest == null) return;
  if (policy == null || digest == null) return c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: confirmation policy and its digest must be both present or both null`);
  if (confirmationPolicyDigest(policy) !== digest) c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: confirmation_policy_digest does not match the policy`);
}

function checkCandidate(c: Checker, digest: string): CandidateRecord | undefined {
  const {store} = c;
  const p = store.paths;
  const recordFile = p.record(digest);
  const record = c.attempt(recordFile, () => store.readRecord(digest));
  if (record === null) c.warn(recordFile, 'MISSING_RECORD', `${c.rel(recordFile)} is missing (an interrupted propose; running it again completes it)`);
  const bundle = c.bundle(digest);
  if (!store.hasBundle(digest)) c.error(recordFile, 'MISSING_BUNDLE', `candidate ${digest} has no manifest in bundles/`);
  if (record && bundle) {
    if (record.parent_digest !== bundle.parent_digest) c.error(recordFile, 'LINEAGE_MISMATCH', `${c.rel(recordFile)}: parent_digest differs from the manifest's`);
    if (record.evaluator_epoch !== bundle.evaluator_epoch) c.error(recordFile, 'LINEAGE_MISMATCH', `${c.rel(recordFile)}: evaluator_epoch differs from the manifest's`);
  }
  if (record) checkPolicy(c, recordFile, record.confirmation_policy, record.confirmation_policy_digest);

  const diffFile = p.manifestDiff(digest);
  const diff = c.attempt(diffFile, () => store.readManifestDiff(digest));
  if (diff && bundle) {
    const parent = c.bundle(diff.comparison_bundle_digest);
    if (diff.tested_bundle_digest !== digest) c.error(diffFile, 'LINEAGE_MISMATCH', `${c.rel(diffFile)}: names tested bundle ${diff.tested_bundle_digest}`);
    // The stored diff's digest was checked against its body when it was read; its body must be the recomputed one.
    else if (parent && !sameDiffBody(manifestDiffBody(bundle, parent), diff)) c.error(diffFile, 'DIGEST_MISMATCH', `${c.rel(diffFile)}: does not equal the diff recomputed from the manifests`);
    else if (!parent) c.error(diffFile, 'MISSING_BUNDLE', `${c.rel(diffFile)}: comparison bundle ${diff.comparison_bundle_digest} is missing`);
  }

  checkEvidence(c, digest);
  const planFile = p.evaluatorPlan(digest);
  c.attempt(planFile, () =>
    store.readDocumentAt(planFile, 'evaluator-plan', (v) => {
      const doc = v as unknown as {plan: {candidate_digest: string; confirmation_policy: ConfirmationPolicy; confirmation_policy_digest: string}; plan_digest: string};
      if (evaluatorPlanDigest(doc.plan) !== doc.plan_digest) c.error(planFile, 'DIGEST_MISMATCH', `${c.rel(planFile)}: plan_digest does not match the plan`);
      if (doc.plan.candidate_digest !== digest) c.error(planFile, 'LINEAGE_MISMATCH', `${c.rel(planFile)}: names candidate ${doc.plan.candidate_digest}`);
      checkPolicy(c, planFile, doc.plan.confirmation_policy, doc.plan.confirmation_policy_digest);
      return doc;
    }),
  );
  checkNegative(c, digest);
  for (const [file, schema] of [
    [p.staleTerminalization(digest), 'stale-terminalization'],
    [p.causalAttribution(digest), 'causal-attribution'],
  ] as const) {
    c.attempt(file, () =>
      store.readDocumentAt(file, schema, (v) => {
        const doc = v as unknown as {candidate_digest: string; manifest_diff?: ManifestDiff};
        if (doc.candidate_digest !== digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: names candidate ${doc.candidate_digest}`);
        if (doc.manifest_diff && diff && doc.manifest_diff.digest !== diff.digest) c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: its manifest diff is not the candidate's`);
        return doc;
      }),
    );
  }
  return record ?? undefined;
}

interface TrialRow {
  candidate_digest: string;
  evaluator_epoch: string;
  cohort: string;
  fixture: string;
  fixture_digest: string;
  seed: number;
  lane: string;
  pair_key: string;
}

function checkEvidence(c: Checker, digest: string): void {
  const file = c.store.paths.matchedTrials(digest);
  c.attempt(file, () =>
    c.store.readDocumentAt(file, ['matched-trials', 'matched-trials-legacy'], (v) => {
      const legacy = Array.isArray(v);
      const doc = v as unknown as {trials: TrialRow[]; confirmation_policy: ConfirmationPolicy; confirmation_policy_digest: string};
      const trials = legacy ? (v as unknown as TrialRow[]) : doc.trials;
      if (!legacy) checkPolicy(c, file, doc.confirmation_policy, doc.confirmation_policy_digest);
      const seen = new Set<string>();
      for (const [i, t] of trials.entries()) {
        const key = matchedTrialPairKey(t);
        if (t.pair_key !== key && !(legacy && t.pair_key === legacyPairKey(t))) c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: trial ${i} pair_key does not match its identity`);
        if (seen.has(key)) c.error(file, 'DUPLICATE_PAIR', `${c.rel(file)}: trial ${i} duplicates matched pair ${key}`);
        seen.add(key);
        if (t.candidate_digest !== digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: trial ${i} is for candidate ${t.candidate_digest}`);
      }
      if (!legacy) checkSeal(c, digest, trials as unknown as MatchedTrial[]);
      return v;
    }),
  );
}

/** Every sealed trial must be in the evidence exactly as sealed; trials recorded after the seal are reported. */
function checkSeal(c: Checker, digest: string, trials: MatchedTrial[]): void {
  const {store} = c;
  const file = store.paths.matchedTrials(digest);
  const sealFile = store.paths.evidenceSeal(digest);
  const seal = c.attempt(sealFile, () => store.readEvidenceSeal(digest));
  if (!seal) return;
  const both = (code: VerifyErrorFinding, message: string) => {
    c.error(file, code, message);
    c.error(sealFile, code, message);
  };
  const status = c.attempt(file, () => compareWithSeal(seal, trials));
  if (!status) return;
  for (const i of status.changed) both('EVIDENCE_SEAL_MISMATCH', `${c.rel(file)}: trial ${i} differs from the trial ${c.rel(sealFile)} sealed`);
  for (const key of status.missing) both('EVIDENCE_SEAL_MISMATCH', `${c.rel(file)}: sealed pair ${key} is missing from the evidence`);
  if (status.unsealed > 0) c.warn(sealFile, 'UNSEALED_TRIALS', `${c.rel(file)}: ${status.unsealed} trial(s) recorded after ${c.rel(sealFile)} was written (an interrupted write, or trials added by another tool; autoctx repair seals them)`);
}

function checkNegative(c: Checker, digest: string): void {
  const {store} = c;
  const file = store.paths.negativeResult(digest);
  const neg = c.attempt(file, () => store.readDocumentAt(file, 'negative-result'));
  const copyFile = store.paths.negativeLedger(digest);
  const copy = c.attempt(copyFile, () => store.readDocumentAt(copyFile, 'negative-result'));
  if (neg && copy === null) c.warn(copyFile, 'MISSING_LEDGER_COPY', `${c.rel(copyFile)}: the discoverable copy of ${c.rel(file)} is missing`);
  if (neg && copy && !jsonEqual(neg, copy)) {
    c.error(copyFile, 'LEDGER_MISMATCH', `${c.rel(copyFile)} differs from ${c.rel(file)}`);
    c.error(file, 'LEDGER_MISMATCH', `${c.rel(file)} differs from its copy ${c.rel(copyFile)}`);
  }
  if (!neg && copy) c.error(copyFile, 'LEDGER_MISMATCH', `${c.rel(copyFile)} has no negative_result.json beside its candidate`);
}

function checkPointer(c: Checker, records: Map<string, CandidateRecord>): ActivePointer | undefined {
  const {store} = c;
  const file = store.paths.active;
  const active = c.attempt(file, () => store.readActive());
  if (active === null) {
    // An init interrupted before its pointer: one parentless bundle, no history. The same init completes it.
    const interruptedInit = c.bundles.size <= 1 && [...c.bundles.values()].every((b) => b.parent_digest === null) && store.listPromotionIds().length === 0 && store.listRollbackIds().length === 0;
    if (interruptedInit) c.warn(file, 'INIT_INCOMPLETE', `${c.rel(file)} is missing: an interrupted init (running the same init again completes it)`);
    else c.error(file, 'MISSING_POINTER', `${c.rel(file)} is missing: the scenario serves no bundle`);
    return undefined;
  }
  if (!active) return undefined;
  const bundle = c.bundle(active.bundle_digest);
  if (!bundle) c.error(file, 'MISSING_BUNDLE', `${c.rel(file)} points at ${active.bundle_digest}, which has no valid manifest`);
  else if (bundle.evaluator_epoch !== active.evaluator_epoch) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: evaluator_epoch differs from the active manifest's`);
  if (active.rollback_target_digest && !c.bundle(active.rollback_target_digest)) c.error(file, 'MISSING_BUNDLE', `${c.rel(file)}: rollback target ${active.rollback_target_digest} has no valid manifest`);
  if (active.promotion_id !== null) {
    const promo = c.attempt(file, () => store.readPromotion(active.promotion_id!));
    if (promo === null) c.error(file, 'MISSING_PROMOTION', `${c.rel(file)} names promotion ${active.promotion_id}, which does not exist`);
    if (promo) {
      if (promo.candidate_digest !== active.bundle_digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: promotion ${promo.promotion_id} promoted ${promo.candidate_digest}, not the active bundle`);
      if (promo.rollback_target_digest !== active.rollback_target_digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: rollback target differs from promotion ${promo.promotion_id}`);
      if (active.manifest_diff_digest !== undefined && active.manifest_diff_digest !== promo.manifest_diff_digest) c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: manifest_diff_digest differs from promotion ${promo.promotion_id}`);
    }
  }
  for (const [digest, r] of records) {
    if (digest === active.bundle_digest && r.lifecycle !== 'active') c.warn(store.paths.record(digest), 'LIFECYCLE_PENDING', `${c.rel(store.paths.record(digest))}: the active bundle's record says "${r.lifecycle}" (a pointer move whose lifecycle update was interrupted; the next promote, rollback or repair completes it)`);
    if (digest !== active.bundle_digest && r.lifecycle === 'active') c.warn(store.paths.record(digest), 'LIFECYCLE_PENDING', `${c.rel(store.paths.record(digest))}: says "active" but the pointer names ${active.bundle_digest}`);
  }
  // The texts of manifests this verify has already re-hashed: read again for their texts only, not hashed twice.
  const texts = (digest: string) => store.readDocumentAt<ContextBundle>(store.paths.bundle(digest), 'manifest');
  const served = bundle ? texts(active.bundle_digest) : null;
  for (const name of ['playbook', 'hints'] as const) {
    const mirrored = (b: ContextBundle | null) => b?.components.find((x) => x.kind === name && x.key === name)?.content;
    const content = mirrored(served);
    const text = c.attempt(store.paths.mirror(name), () => store.readText(store.paths.mirror(name))) ?? null;
    const want = content !== undefined ? `${content.trimEnd()}\n` : null;
    if (served && text !== want && !(text !== null && want !== null && text.trimEnd() === want.trimEnd())) {
      // An interrupted move leaves another stored bundle's text (or none); any other text was edited by hand.
      const stored = text !== null && [...c.bundles.keys()].some((d) => mirrored(texts(d))?.trimEnd() === text.trimEnd());
      if (text === null || stored) c.warn(store.paths.mirror(name), 'STALE_MIRROR', `${name}.md does not mirror the active bundle (an interrupted move; the next promote, rollback or repair rewrites it)`);
      else c.error(store.paths.mirror(name), 'MIRROR_MISMATCH', `${c.rel(store.paths.mirror(name))} was edited: it is the text of no stored bundle, and agents reading it are not served the active bundle (autoctx repair rewrites it)`);
    }
  }
  return active;
}

function checkHistory(c: Checker): void {
  const {store} = c;
  for (const id of store.listPromotionIds()) {
    const file = store.paths.promotion(id);
    const p = c.attempt(file, () => store.readPromotion(id));
    if (!p) continue;
    checkPolicy(c, file, p.confirmation_policy, p.confirmation_policy_digest);
    for (const d of [p.candidate_digest, p.incumbent_digest]) if (!c.bundle(d)) c.error(file, 'MISSING_BUNDLE', `${c.rel(file)} names bundle ${d}, which has no valid manifest`);
    const cand = c.bundle(p.candidate_digest);
    if (cand && cand.parent_digest !== p.incumbent_digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: the candidate's parent is not the recorded incumbent`);
    if (cand && cand.evaluator_epoch !== p.evaluator_epoch) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: evaluator_epoch differs from the candidate's manifest`);
    if (p.rollback_target_digest !== p.incumbent_digest) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: the rollback target is not the incumbent it replaced`);
    const diff = store.paths.manifestDiff(p.candidate_digest);
    const d = c.attempt(diff, () => store.readManifestDiff(p.candidate_digest));
    if (d && d.digest !== p.manifest_diff_digest) c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: manifest_diff_digest is not the candidate's manifest diff`);
  }
  for (const id of store.listRollbackIds()) {
    const file = store.paths.rollback(id);
    const r = c.attempt(file, () => store.readRollback(id));
    if (!r) continue;
    if (rollbackId(r.from_digest, r.from_activated_at, r.to_digest) !== id) c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: rollback id does not match the move it records`);
    for (const d of [r.from_digest, r.to_digest]) if (!c.bundle(d)) c.error(file, 'MISSING_BUNDLE', `${c.rel(file)} names bundle ${d}, which has no valid manifest`);
    if (r.scenario !== store.scenario) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: records a move in scenario "${r.scenario}"`);
    const to = c.bundle(r.to_digest);
    if (to && to.evaluator_epoch !== r.evaluator_epoch) c.error(file, 'LINEAGE_MISMATCH', `${c.rel(file)}: evaluator_epoch differs from the restored bundle's`);
  }
}

function checkCampaigns(c: Checker): void {
  const {store} = c;
  for (const entry of c.entries()) {
    if (entry.kind !== 'file' || !entry.path.startsWith(store.paths.riskDir + path.sep)) continue;
    const name = path.basename(entry.path);
    const dir = path.dirname(entry.path);
    if (name === 'false-promotion.json') {
      c.attempt(entry.path, () =>
        store.readDocumentAt(entry.path, 'false-promotion', (v) => {
          const l = v as unknown as {schema_version: number; campaign_id: string; state_digest: string; reservations: unknown; policy: unknown};
          if (campaignSegment(l.campaign_id) !== path.basename(dir)) c.error(entry.path, 'LINEAGE_MISMATCH', `${c.rel(entry.path)}: campaign "${l.campaign_id}" is stored under another folder`);
          if ((l.schema_version === 2 ? campaignStateDigest(l) : legacyCampaignStateDigest(l)) !== l.state_digest) c.error(entry.path, 'DIGEST_MISMATCH', `${c.rel(entry.path)}: state_digest does not match the ledger`);
          return v;
        }),
      );
    } else if (path.basename(dir) === 'reservation-artifacts' && name.endsWith('.json')) {
      c.attempt(entry.path, () =>
        store.readDocumentAt(entry.path, 'reservation-artifact', (v) => {
          const a = v as unknown as {artifact_digest: string; campaign_id: string; risk_reservation: {candidate_digest: string}; fixture_reservation: {candidate_digest: string}};
          if (reservationArtifactDigest(a) !== a.artifact_digest) c.error(entry.path, 'DIGEST_MISMATCH', `${c.rel(entry.path)}: artifact_digest does not match the artifact`);
          if (`${a.risk_reservation.candidate_digest}.json` !== name) c.error(entry.path, 'LINEAGE_MISMATCH', `${c.rel(entry.path)}: reserves another candidate`);
          return v;
        }),
      );
    }
  }
}

/** Replay every recorded comparison; cross-check promotion records against it. */
function checkReplays(c: Checker, records: Map<string, CandidateRecord>): void {
  const {store} = c;
  for (const [digest, record] of records) {
    if (!c.bundle(digest)) continue;
    const file = store.paths.matchedTrials(digest);
    const pairs = (x: {screen_pairs: number; confirmation_pairs: number; heldout_pairs: number} | null) => (x ? x.screen_pairs + x.confirmation_pairs + x.heldout_pairs : 0);
    if (!record.comparison) {
      const evidence = c.attempt(file, () => store.readEvidence(digest));
      if (evidence && evidence.trials.length > 0) c.warn(store.paths.record(digest), 'RECORD_BEHIND_EVIDENCE', `${c.rel(store.paths.record(digest))} lags its evidence (an interrupted run; running it again or autoctx repair completes it)`);
      continue;
    }
    const r = c.attempt(file, () => replayCandidate(store, digest));
    // Only a record still before its decision can lag its evidence; a decided record that disagrees was changed.
    if (r && r.status !== 'ok' && (record.lifecycle === 'proposed' || record.lifecycle === 'screened') && pairs(r.recorded) < pairs(r.replayed)) {
      c.warn(store.paths.record(digest), 'RECORD_BEHIND_EVIDENCE', `${c.rel(store.paths.record(digest))} lags its evidence (an interrupted run; running it again or autoctx repair completes it)`);
    } else if (r && (r.status !== 'ok' || (!r.bit_exact && !c.replayTolerance))) {
      const why = r.status !== 'ok' ? 'does not reproduce' : 'reproduces only within the cross-runtime tolerance (pass --replay-tolerance to accept that)';
      const message = `${c.rel(store.paths.record(digest))}: the recorded comparison ${why} from ${c.rel(file)} (largest distance ${r.max_ulp} ULP)`;
      c.error(store.paths.record(digest), 'REPLAY_MISMATCH', message);
      c.error(file, 'REPLAY_MISMATCH', message);
    } else if (r && !r.bit_exact) c.warn(store.paths.record(digest), 'REPLAY_TOLERANCE', `${c.rel(store.paths.record(digest))} replays within the cross-runtime tolerance (${r.max_ulp} ULP), not bit for bit`);
  }
  for (const id of store.listPromotionIds()) {
    const p = c.attempt(store.paths.promotion(id), () => store.readPromotion(id));
    const r = p ? records.get(p.candidate_digest) : undefined;
    if (p && r?.comparison && !jsonEqual(p.comparison, r.comparison)) {
      c.error(store.paths.promotion(id), 'LINEAGE_MISMATCH', `${c.rel(store.paths.promotion(id))}: its comparison differs from the candidate's record`);
      c.error(store.paths.record(p.candidate_digest), 'LINEAGE_MISMATCH', `${c.rel(store.paths.record(p.candidate_digest))}: its comparison differs from promotion ${id}`);
    }
    const evidence = p ? c.attempt(store.paths.matchedTrials(p.candidate_digest), () => store.readEvidence(p.candidate_digest)) : undefined;
    const cohorts = new Set((evidence?.trials ?? []).map((t) => t.cohort));
    if (p && cohorts.size > 0 && !cohorts.has(p.cohort)) c.error(store.paths.promotion(id), 'LINEAGE_MISMATCH', `${c.rel(store.paths.promotion(id))}: cohort "${p.cohort}" is not the cohort of the candidate's matched trials`);
  }
}

/** Run one group of checks; a refusal it runs into (a link out of the tree, say) becomes an error entry. */
function guarded(c: Checker, where: string, fn: () => void): void {
  try {
    fn();
  } catch (error) {
    if (!isAutoctxError(error)) throw error;
    c.error(path.join(c.store.guard.root, (error.data?.file as string | undefined) ?? where), error.code, error.message);
  }
}

/** The walk of the scenario, then its manifests' digests (none when they cannot be listed: that error is recorded). */
function manifestDigests(c: Checker): string[] {
  const where = c.store.paths.contextDir;
  guarded(c, where, () => checkTree(c));
  let digests: string[] = [];
  guarded(c, where, () => {
    digests = c.store.listBundleDigests();
  });
  return digests;
}

function verifyScenario(c: Checker, manifests: readonly ManifestCheck[]): void {
  const where = c.store.paths.contextDir;
  guarded(c, where, () => checkBundles(c, manifests));
  const records = new Map<string, CandidateRecord>();
  guarded(c, where, () => {
    for (const digest of c.store.listCandidateDigests()) {
      const r = checkCandidate(c, digest);
      if (r) records.set(digest, r);
    }
  });
  guarded(c, where, () => checkPointer(c, records));
  guarded(c, where, () => checkHistory(c));
  guarded(c, where, () => checkReplays(c, records));
  guarded(c, where, () => checkCampaigns(c));
  for (const e of c.entries()) {
    if (e.kind === 'file' && e.path.startsWith(c.store.paths.negativeLedgersDir + path.sep) && !/^context-bundle-[0-9a-f]{64}\.json$/.test(path.basename(e.path))) {
      c.attempt(e.path, () => c.store.readDocumentAt(e.path, 'negative-result'));
    }
  }
}

type VerifyOptions = StoreOptions & {replayTolerance?: boolean};

function start(options: VerifyOptions): {result: VerifyResult; checkers: Checker[]} {
  const knowledge = openKnowledge(options);
  const names = options.scenario !== undefined ? [knowledge.resolveScenario(options.scenario)] : knowledge.listScenarios();
  const result: VerifyResult = {status: 'ok', scenarios: names, files_checked: 0, bundles_checked: 0, errors: [], warnings: []};
  const ignore = knowledge.missingGitignoreRules();
  if (ignore) result.files_checked++;
  if (ignore && ignore.missing.length > 0) {
    const rel = path.relative(knowledge.root, ignore.file);
    result.errors.push({severity: 'error', code: 'GITIGNORE_INCOMPLETE', file: rel, message: `${rel} lacks ${ignore.missing.map((l) => `"${l}"`).join(', ')}: lock and temporary files could be committed (autoctx init restores the rules)`});
  }
  return {result, checkers: names.map((name) => new Checker(knowledge.scenario(name), options.replayTolerance === true))};
}

function add(result: VerifyResult, c: Checker): void {
  result.files_checked += c.filesChecked;
  result.bundles_checked += c.bundles.size;
  result.errors.push(...c.errors);
  result.warnings.push(...c.warnings);
}

function settle(result: VerifyResult): VerifyResult {
  if (result.errors.length > 0) result.status = 'failed';
  return result;
}

/**
 * Re-hash every manifest, check every file against its schema and digests and
 * every pointer against the files it names. Interrupted-but-repairable states
 * are warnings; anything else is an error (exit 8).
 */
export function verify(options: VerifyOptions): VerifyResult {
  const {result, checkers} = start(options);
  for (const c of checkers) {
    verifyScenario(c, manifestDigests(c).map((d) => checkManifest(c.store, d)));
    add(result, c);
  }
  return settle(result);
}

/** verify, with a large scenario's manifests checked on two threads (verify-manifests.ts): the same result, sooner. */
export async function verifyInParallel(options: VerifyOptions): Promise<VerifyResult> {
  const {result, checkers} = start(options);
  for (const c of checkers) {
    verifyScenario(c, await checkManifests(c.store, manifestDigests(c)));
    add(result, c);
  }
  return settle(result);
}
