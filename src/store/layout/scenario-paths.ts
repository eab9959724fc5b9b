import path from 'node:path';
import {fail} from '../../errors.js';
import {HARNESS_KEY} from '../../model/bundle/harness-runtime.js';
import {
  assertScenarioName,
  campaignSegment,
  digestSegment,
  isSafeSegment,
  ledgerSegment,
  scopeSegment,
} from './segments.js';
import {isOwnNegativeLedgerName} from './leftover-names.js';
import {historyEntryName, type HistoryKey} from './history-names.js';

const RELEASE_FILE_SEGMENT = /^[A-Za-z0-9._-]{1,64}$/;

/** Every path inside one scenario's store. Nothing else builds paths under the knowledge root. */
export class ScenarioPaths {
  readonly dir: string;
  readonly contextDir: string;
  readonly bundlesDir: string;
  readonly candidatesDir: string;
  /** Each candidate's folder, its digest checked once: verify asks for a dozen files of each. */
  private readonly candidateDirs = new Map<string, string>();

  constructor(
    readonly root: string,
    readonly scenario: string,
  ) {
    assertScenarioName(scenario);
    this.dir = path.join(root, scenario);
    this.contextDir = path.join(this.dir, 'context_bundles');
    this.bundlesDir = path.join(this.contextDir, 'bundles');
    this.candidatesDir = path.join(this.contextDir, 'candidates');
  }

  /** The scenario's own allowed signers (git's allowed_signers format), changed only through signed changes. */
  get allowedSigners(): string {
    return path.join(this.dir, 'allowed_signers');
  }
  get signingDir(): string {
    return path.join(this.contextDir, 'signing');
  }
  get signingStart(): string {
    return path.join(this.signingDir, 'start.json');
  }
  get signersChangesDir(): string {
    return path.join(this.signingDir, 'signers');
  }
  /** The signed state chain: each change named by the SHA-256 of its bytes. */
  get stateChainDir(): string {
    return path.join(this.signingDir, 'chain');
  }
  stateChange(digest: string): string {
    if (!/^[0-9a-f]{64}$/.test(digest)) fail('INVALID_INPUT', `not a state change digest: ${digest}`);
    return path.join(this.stateChainDir, `${digest}.json`);
  }
  signersChange(seq: number): string {
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > 999_999)
      fail('INVALID_INPUT', `not a signers change number: ${seq}`);
    return path.join(this.signersChangesDir, `${String(seq).padStart(6, '0')}.json`);
  }
  get active(): string {
    return path.join(this.contextDir, 'active.json');
  }
  bundle(digest: string): string {
    return `${this.bundlesDir}${path.sep}${digestSegment(digest)}.json`;
  }
  candidateDir(digest: string): string {
    let dir = this.candidateDirs.get(digest);
    if (dir === undefined) {
      dir = `${this.candidatesDir}${path.sep}${digestSegment(digest)}`;
      this.candidateDirs.set(digest, dir);
    }
    return dir;
  }
  /** A file of a candidate's folder (the names are fixed and safe, so joining is concatenation). */
  private inCandidate(digest: string, name: string): string {
    return `${this.candidateDir(digest)}${path.sep}${name}`;
  }
  /** The lock of one candidate's evaluation run (one run per candidate at a time). */
  runLock(digest: string): string {
    return this.inCandidate(digest, 'autoctx.lock');
  }
  record(digest: string): string {
    return this.inCandidate(digest, 'record.json');
  }
  manifestDiff(digest: string): string {
    return this.inCandidate(digest, 'manifest_diff.json');
  }
  matchedTrials(digest: string): string {
    return this.inCandidate(digest, 'matched_trials.json');
  }
  evidenceSeal(digest: string): string {
    return this.inCandidate(digest, 'evidence_seal.json');
  }
  /** What the evaluator observed of each recorded pair beside its scores (autoctx addition, descriptive only). */
  trialObservations(digest: string): string {
    return this.inCandidate(digest, 'trial_observations.json');
  }
  evaluatorPlan(digest: string): string {
    return this.inCandidate(digest, 'evaluator_plan.json');
  }
  /** The folder of a candidate's plans superseded by a rebind. */
  supersededPlansDir(digest: string): string {
    return this.inCandidate(digest, 'superseded_plans');
  }
  supersededPlan(digest: string, planDigest: string): string {
    return `${this.supersededPlansDir(digest)}${path.sep}${digestSegment(planDigest)}.json`;
  }
  /** The folder of a candidate's record history: record.json as each change left it. */
  recordHistoryDir(digest: string): string {
    return this.inCandidate(digest, 'record_history');
  }
  /** An entry: `<sha256 of the entry>.json`, or the `<seq>.json` earlier versions wrote. */
  recordHistoryEntry(digest: string, key: HistoryKey): string {
    return `${this.recordHistoryDir(digest)}${path.sep}${historyEntryName(key, 'record history position')}`;
  }
  /** Since when the scenario keeps record histories, and which candidates predate it. */
  get historyAdoption(): string {
    return path.join(this.contextDir, 'record_histories.json');
  }
  /** The scenario's bootstrap curation (autoctx addition): tags, context references, grants, handoffs. */
  get bootstrapDir(): string {
    return path.join(this.contextDir, 'bootstrap');
  }
  get curation(): string {
    return path.join(this.bootstrapDir, 'curation.json');
  }
  get curationHistoryDir(): string {
    return path.join(this.bootstrapDir, 'curation_history');
  }
  /** An entry: `<sha256 of the entry>.json`, or the `<seq>.json` earlier versions wrote. */
  curationEntry(key: HistoryKey): string {
    return path.join(this.curationHistoryDir, historyEntryName(key, 'curation history position'));
  }
  get handoffsDir(): string {
    return path.join(this.bootstrapDir, 'handoffs');
  }
  /** Releases (autoctx addition): descriptors, one registry per scope, transition receipts per scope. */
  get releasesDir(): string {
    return path.join(this.contextDir, 'releases');
  }
  get releaseVersionsDir(): string {
    return path.join(this.releasesDir, 'versions');
  }
  /**
   * A descriptor's file: the version lowercased, so that two names equal under case folding are one file on every file
   * system.
   */
  releaseVersion(version: string): string {
    if (!RELEASE_FILE_SEGMENT.test(version) || /^\.+$/.test(version))
      fail('INVALID_NAME', `not a version name: ${JSON.stringify(version)}`);
    return path.join(this.releaseVersionsDir, `${version.toLowerCase()}.json`);
  }
  get releaseRegistryDir(): string {
    return path.join(this.releasesDir, 'registry');
  }
  releaseRegistry(scope: string): string {
    return path.join(this.releaseRegistryDir, `${scopeSegment(scope)}.json`);
  }
  get releaseReceiptsDir(): string {
    return path.join(this.releasesDir, 'receipts');
  }
  releaseReceiptDir(scope: string): string {
    return path.join(this.releaseReceiptsDir, scopeSegment(scope));
  }
  /** A receipt: `<sha256 of the receipt>.json`, or the `<seq>.json` earlier versions wrote. */
  releaseReceipt(scope: string, key: HistoryKey): string {
    return path.join(this.releaseReceiptDir(scope), historyEntryName(key, 'receipt position'));
  }
  handoffDir(id: string): string {
    if (!isSafeSegment(id)) fail('INVALID_NAME', `not a handoff id: ${JSON.stringify(id)}`);
    return path.join(this.handoffsDir, id);
  }
  /** A revision: `<sha256 of the revision>.json`, or the `<revision>.json` earlier versions wrote. */
  handoffRevision(id: string, key: HistoryKey): string {
    return path.join(this.handoffDir(id), historyEntryName(key, 'handoff revision'));
  }
  negativeResult(digest: string): string {
    return this.inCandidate(digest, 'negative_result.json');
  }
  causalAttribution(digest: string): string {
    return this.inCandidate(digest, 'causal_attribution.json');
  }
  /** The promotion guardrails' verdicts, written with the promotion they allowed (autoctx addition). */
  promotionGuardrails(digest: string): string {
    return this.inCandidate(digest, 'promotion_guardrails.json');
  }
  staleTerminalization(digest: string): string {
    return this.inCandidate(digest, 'stale_terminalization.json');
  }
  get runtimeDir(): string {
    return path.join(this.contextDir, 'runtime');
  }
  /** Where the Python implementation's serving path loads a bundle's harness validators from. */
  harnessDir(digest: string): string {
    return path.join(this.runtimeDir, digestSegment(digest), 'harness');
  }
  harnessFile(digest: string, key: string): string {
    if (!HARNESS_KEY.test(key)) fail('INVALID_INPUT', `not a harness validator key: ${JSON.stringify(key)}`);
    return path.join(this.harnessDir(digest), `${key}.py`);
  }
  get promotionsDir(): string {
    return path.join(this.contextDir, 'promotions');
  }
  promotion(id: string): string {
    if (!/^[0-9a-f]{32}$/.test(id)) fail('INVALID_INPUT', `not a promotion id: ${JSON.stringify(id)}`);
    return path.join(this.promotionsDir, `${id}.json`);
  }
  get rollbacksDir(): string {
    return path.join(this.contextDir, 'rollbacks');
  }
  rollback(id: string): string {
    if (!/^[0-9a-f]{32}$/.test(id)) fail('INVALID_INPUT', `not a rollback id: ${JSON.stringify(id)}`);
    return path.join(this.rollbacksDir, `${id}.json`);
  }
  /** An execution of the rollback service (RBX-…), beside the older pointer-move records. */
  rollbackExecution(key: string): string {
    if (!/^RBX-\d{14}-[0-9a-f]{8}$/.test(key))
      fail('INVALID_INPUT', `not a rollback execution key: ${JSON.stringify(key)} (RBX-<14 digits>-<8 hex>)`);
    return path.join(this.rollbacksDir, `${key}.json`);
  }
  get rollbackApprovalsDir(): string {
    return path.join(this.rollbacksDir, 'approvals');
  }
  rollbackApproval(key: string): string {
    this.rollbackExecution(key);
    return path.join(this.rollbackApprovalsDir, `${key}.json`);
  }
  get rolloversDir(): string {
    return path.join(this.contextDir, 'rollovers');
  }
  rollover(id: string): string {
    if (!/^[0-9a-f]{32}$/.test(id)) fail('INVALID_INPUT', `not a rollover id: ${JSON.stringify(id)}`);
    return path.join(this.rolloversDir, `${id}.json`);
  }
  /** What `autoctx reconcile` did after a merge of two clones: one record per reconcile, named by its digest. */
  get reconcilesDir(): string {
    return path.join(this.contextDir, 'reconciles');
  }
  reconcile(digest: string): string {
    if (!/^[0-9a-f]{64}$/.test(digest)) fail('INVALID_INPUT', `not a reconcile digest: ${JSON.stringify(digest)}`);
    return path.join(this.reconcilesDir, `${digest}.json`);
  }
  /** Pointers another implementation's rollback or rollover wrote, kept when autoctx moved on from them. */
  get foreignMovesDir(): string {
    return path.join(this.contextDir, 'foreign_moves');
  }
  foreignMove(id: string): string {
    if (!/^[0-9a-f]{32}$/.test(id)) fail('INVALID_INPUT', `not a foreign move id: ${JSON.stringify(id)}`);
    return path.join(this.foreignMovesDir, `${id}.json`);
  }
  get riskDir(): string {
    return path.join(this.contextDir, 'promotion-risk');
  }
  campaignDir(campaignId: string): string {
    return path.join(this.riskDir, campaignSegment(campaignId));
  }
  campaignLedger(campaignId: string): string {
    return path.join(this.campaignDir(campaignId), 'false-promotion.json');
  }
  reservationArtifact(campaignId: string, digest: string): string {
    return path.join(this.campaignDir(campaignId), 'reservation-artifacts', `${digestSegment(digest)}.json`);
  }
  get negativeLedgersDir(): string {
    return path.join(this.dir, 'negative_result_ledgers');
  }
  negativeLedger(digest: string): string {
    return path.join(this.negativeLedgersDir, `${ledgerSegment(`context-bundle-${digestSegment(digest)}`)}.json`);
  }
  /** The campaign folder a ledger or an artifact lives in, and whether it is a reservation artifact. */
  campaignFileKind(file: string): {kind: 'ledger'; folder: string} | {kind: 'artifact'; candidate: string} | null {
    if (!file.startsWith(this.riskDir + path.sep)) return null;
    const name = path.basename(file);
    const dir = path.dirname(file);
    if (name === 'false-promotion.json') return {kind: 'ledger', folder: path.basename(dir)};
    if (path.basename(dir) === 'reservation-artifacts' && name.endsWith('.json'))
      return {kind: 'artifact', candidate: name.slice(0, -5)};
    return null;
  }
  /** A file of negative_result_ledgers/ that autoctx did not name itself. */
  isForeignNegativeLedger(file: string): boolean {
    return file.startsWith(this.negativeLedgersDir + path.sep) && !isOwnNegativeLedgerName(path.basename(file));
  }
  mirror(name: 'playbook' | 'hints'): string {
    return path.join(this.dir, `${name}.md`);
  }
  /**
   * The lock file guarding this scenario's store (src/store/files/lock.ts; a folder of that name is an older autoctx's
   * lock).
   */
  get lock(): string {
    return path.join(this.contextDir, 'autoctx.lock');
  }
  /** The file the lock is nominally taken on; it need not exist. */
  get lockTarget(): string {
    return path.join(this.contextDir, 'autoctx');
  }
}
