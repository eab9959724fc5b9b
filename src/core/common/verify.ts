import path from 'node:path';
import {jsonEqual} from '../../canonical/index.js';
import {isAutoctxError} from '../../errors.js';
import {type CandidateRecord} from '../../model/promotion/records.js';
import {Findings, type Mark, type VerifyIssue} from '../../store/findings.js';
import {verifyActive} from '../../store/kinds/promotion/active-pointer.js';
import {verifyReleases} from '../release/verify-releases.js';
import {verifyRollbacks} from '../rollback/verify-rollbacks.js';
import {verifySignatures} from '../signing/verify-signatures.js';
import {readAnchor} from '../signing/trust.js';
import {approvalWindowOf} from '../rollback/rollback-records.js';
import {verifyBundle} from '../../store/kinds/bundle/bundle.js';
import {verifyCampaignOfPlan, verifyCampaigns} from '../../store/kinds/evaluation/campaign-ledger.js';
import {verifyDecidedFiles, verifyLifecycle, verifyRecord} from '../../store/kinds/promotion/candidate-record.js';
import {verifyPlan, verifySupersededPlans} from '../../store/kinds/evaluation/evaluator-plan.js';
import {verifyHarnessRuntime} from '../../store/kinds/bundle/harness-runtime.js';
import {interruptedBaseline, verifyHistory} from '../../store/kinds/promotion/history.js';
import {predatesHistories, verifyAdoption, type AdoptionRead} from '../../store/kinds/promotion/history-adoption.js';
import {verifyCuration, verifyTags} from '../../store/kinds/delivery/curation.js';
import {verifyHandoffs} from '../../store/kinds/delivery/handoff.js';
import {verifyLeftovers} from '../../store/kinds/common/leftovers.js';
import {verifyRecordHistory} from '../../store/kinds/promotion/record-history.js';
import {verifyManifestDiff} from '../../store/kinds/bundle/manifest-diff.js';
import {verifyEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {verifyForeignLedgers, verifyNegativeResult} from '../../store/kinds/promotion/negative-result.js';
import {verifyMarkers} from '../../store/kinds/promotion/terminal-markers.js';
import {now, openKnowledge, type StoreOptions} from './store-options.js';
import {replayCandidate} from '../evaluation/replay.js';
import {ManifestChecks, ManifestHelper, manifestOutline} from '../bundle/verify-manifests.js';

export type {VerifyIssue} from '../../store/findings.js';

export interface VerifyResult {
  status: 'ok' | 'failed';
  scenarios: string[];
  files_checked: number;
  bundles_checked: number;
  errors: VerifyIssue[];
  warnings: VerifyIssue[];
  /** Accepted on another implementation's files alone (no seal, an unrecorded pointer move). */
  notes: VerifyIssue[];
  /** The head of each signed scenario's state chain: what an anchor pins (`# autoctx-chain <scenario> <sha256>`). */
  chain_heads?: Record<string, string>;
}

/**
 * verify orchestrates the checks each document kind owns (src/store/kinds)
 * in dependency order: manifests first (the others compare against them),
 * then each candidate's files, the pointer and its mirrors, the history, the
 * replays (a use case, so here), the campaigns. Every check runs even after
 * a failure.
 */

function checkCandidate(c: Findings, digest: string, adoption: AdoptionRead | undefined, histories: {kept: boolean}): CandidateRecord | undefined {
  const record = verifyRecord(c, digest);
  if (verifyRecordHistory(c, digest, record, adoption)) histories.kept = true;
  const diff = verifyManifestDiff(c, digest);
  // The plan is read and checked once; the evidence and its seal are checked against it.
  const plan = verifyPlan(c, digest);
  verifySupersededPlans(c, digest, plan);
  const predating = predatesHistories(adoption, digest);
  const evidence = verifyEvidence(c, digest, plan, record, predating);
  verifyNegativeResult(c, digest, plan);
  verifyMarkers(c, digest, diff);
  if (plan) verifyCampaignOfPlan(c, digest, plan.additions.campaign_id ?? null);
  if (record) {
    verifyDecidedFiles(c, digest, record, {predating, diff, plan, evidence, seal: evidence?.seal});
    verifyLifecycle(c, digest, record);
  }
  return record ?? undefined;
}

/**
 * A manifest with a parent always has its candidate folder (propose writes
 * the diff first); a parentless one is a baseline whose record init or a
 * rollover writes next (an interrupted one is reported by the pointer's check).
 */
function checkUnrecordedBundles(c: Findings, candidates: readonly string[]): void {
  const known = new Set(candidates);
  const {store} = c;
  for (const [digest, outline] of c.bundles) {
    if (known.has(digest)) continue;
    if (outline.parent_digest === null && interruptedBaseline(store, digest, c.attempt(store.paths.active, () => store.readActive()) ?? null)) continue;
    const file = store.paths.bundle(digest);
    c.error(file, 'MISSING_CANDIDATE', `${c.rel(file)} has no ${c.rel(store.paths.candidateDir(digest))}/: its record, and any evaluation of it, were deleted`);
  }
}

/** Replay every recorded comparison; cross-check promotion records against it. */
function checkReplays(c: Findings, records: Map<string, CandidateRecord>): void {
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
    // Legacy evidence the Python implementation wrote before it bound policies cannot be replayed until it is migrated: said, not failed.
    const policyless = !record.confirmation_policy && c.attempt(file, () => store.readEvidence(digest))?.legacy === true; // (read only for a record without a policy)
    if (policyless) {
      c.warn(file, 'LEGACY_EVIDENCE', `${c.rel(file)} is schema-1 evidence with no recorded policy, so its comparison is not replayed; migrate it under the policy it was recorded with: autoctx trials migrate ${digest.slice(0, 12)} --policy FILE`);
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
function guarded(c: Findings, where: string, fn: () => void): void {
  try {
    fn();
  } catch (error) {
    if (!isAutoctxError(error)) throw error;
    c.error(c.store.guard.absolute((error.data?.file as string | undefined) ?? where), error.code, error.message);
  }
}

/** The walk of the scenario, then its manifests' digests (none when they cannot be listed: that error is recorded). */
function manifestDigests(c: Findings): string[] {
  const where = c.store.paths.contextDir;
  guarded(c, where, () => verifyLeftovers(c));
  let digests: string[] = [];
  guarded(c, where, () => {
    digests = c.store.listBundleDigests();
  });
  return digests;
}

/**
 * The candidates are checked before the manifests' own findings are
 * recorded, asking for each manifest as a candidate needs it, so that a
 * helper thread checks the others meanwhile; the manifests' findings are then
 * put before the candidates', and every answer is the one of checking the
 * manifests first.
 */
function verifyScenario(c: Findings, manifests: ManifestChecks): void {
  const where = c.store.paths.contextDir;
  const mark = c.mark();
  const records = new Map<string, CandidateRecord>();
  c.withOutlines(
    (digest) => manifests.outline(digest),
    () =>
      guarded(c, where, () => {
        const adoption = verifyAdoption(c);
        const histories = {kept: false};
        const digests = c.store.listCandidateDigests();
        // From the front, and, whenever the helper has checked the manifests it needs, the next from the back;
        // each candidate's findings are then put in the order of the list, as if they had been checked in it.
        const found: Array<CandidateRecord | undefined> = [];
        const blocks: Array<[Mark, Mark]> = [];
        const start = c.mark();
        for (let front = 0, back = digests.length - 1; front <= back; ) {
          const i = manifests.ready(digests[back]!) ? back-- : front++;
          const before = c.mark();
          guarded(c, where, () => {
            found[i] = checkCandidate(c, digests[i]!, adoption, histories);
          });
          blocks[i] = [before, c.mark()];
        }
        c.arrange(start, blocks);
        digests.forEach((d, i) => {
          if (found[i]) records.set(d, found[i]);
        });
        // Once for the scenario, not once per candidate that keeps a history.
        if (adoption === null && histories.kept) c.error(c.store.paths.historyAdoption, 'MISSING_RECORD_HISTORY', `${c.rel(c.store.paths.historyAdoption)} is missing, but candidates keep record histories`);
      }),
  );
  c.reportBefore(mark, () =>
    guarded(c, where, () => {
      for (const check of manifests.all()) {
        const outline = c.attempt(c.store.paths.bundle(check.digest), () => manifestOutline(check));
        if (outline) verifyBundle(c, check.digest, outline);
      }
    }),
  );
  guarded(c, where, () => checkUnrecordedBundles(c, [...records.keys(), ...c.store.listCandidateDigests()]));
  guarded(c, where, () => verifyHarnessRuntime(c));
  guarded(c, where, () => verifyActive(c, records));
  guarded(c, where, () => verifyHistory(c));
  guarded(c, where, () => checkReplays(c, records));
  guarded(c, where, () => verifyCampaigns(c));
  guarded(c, where, () => verifyForeignLedgers(c));
  guarded(c, where, () => {
    const curation = verifyCuration(c);
    if (curation) {
      verifyTags(c, curation);
      verifyHandoffs(c, curation);
    }
  });
  guarded(c, where, () => verifyReleases(c, records));
  guarded(c, where, () => verifyRollbacks(c, records));
  guarded(c, where, () => verifySignatures(c, c.anchor));
}

type VerifyOptions = StoreOptions & {replayTolerance?: boolean; allowedSigners?: string | undefined};

/** The root-level checks (the .gitignore, entries verify cannot account for), then one Findings per scenario. */
function start(options: VerifyOptions): {result: VerifyResult; checkers: Findings[]} {
  const knowledge = openKnowledge(options);
  const names = options.scenario !== undefined ? [knowledge.resolveScenario(options.scenario)] : knowledge.listScenarios();
  const result: VerifyResult = {status: 'ok', scenarios: names, files_checked: 0, bundles_checked: 0, errors: [], warnings: [], notes: []};
  const ignore = knowledge.gitignore();
  if (ignore) {
    result.files_checked++;
    const rel = path.relative(knowledge.root, ignore.file);
    const quoted = (lines: string[]) => lines.map((l) => `"${l}"`).join(', ');
    if (ignore.removed.length > 0) {
      result.errors.push({severity: 'error', code: 'GITIGNORE_INCOMPLETE', file: rel, message: `${rel} lacks ${quoted(ignore.removed)}: lock and temporary files could be committed (any writing command or autoctx repair restores the rules)`});
    }
    if (ignore.outdated.length > 0) {
      result.warnings.push({severity: 'warning', code: 'GITIGNORE_OUTDATED', file: rel, message: `${rel} lacks ${quoted(ignore.outdated)}, added by a newer autoctx than the one that made this tree (any writing command or autoctx repair adds them)`});
    }
  }
  for (const e of knowledge.unknownRootEntries()) result.errors.push({severity: 'error', code: e.code, file: e.file, message: e.why});
  for (const group of knowledge.scenarioCollisions()) {
    const message = `scenario folders ${group.map((g) => `"${g}"`).join(' and ')} are the same name after Unicode normalization (NFC): a person, or a file system that normalizes, cannot tell them apart; rename one of them`;
    for (const name of group) result.errors.push({severity: 'error', code: 'SCENARIO_COLLISION', file: name, message});
  }
  const windowDays = approvalWindowOf(knowledge, true);
  const at = now(options);
  const anchor = readAnchor(options.allowedSigners, options.knowledge);
  return {result, checkers: names.map((name) => new Findings(knowledge.scenario(name), options.replayTolerance === true, at, windowDays, anchor))};
}

function add(result: VerifyResult, c: Findings): void {
  result.files_checked += c.filesChecked;
  result.bundles_checked += c.bundles.size;
  result.errors.push(...c.errors);
  result.warnings.push(...c.warnings);
  result.notes.push(...c.notes);
  if (c.chainHead !== null) result.chain_heads = {...result.chain_heads, [c.store.scenario]: c.chainHead};
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
    verifyScenario(c, ManifestChecks.sync(c.store, manifestDigests(c)));
    add(result, c);
  }
  return settle(result);
}

/** verify, with a large scenario's manifests checked on two threads (verify-manifests.ts): the same result, sooner. */
export async function verifyInParallel(options: VerifyOptions): Promise<VerifyResult> {
  const {result, checkers} = start(options);
  for (const c of checkers) {
    const helper = ManifestHelper.startFor(c.store); // before the walk: it starts while this thread reads the tree
    try {
      verifyScenario(c, await ManifestChecks.open(c.store, manifestDigests(c), helper));
    } finally {
      helper?.stop();
    }
    add(result, c);
  }
  return settle(result);
}
