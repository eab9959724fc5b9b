import path from 'node:path';
import {createHash} from 'node:crypto';
import {stableDigest} from '../canonical/index.js';
import {fail} from '../errors.js';
import {HARNESS_KEY} from '../model/bundle/harness-runtime.js';
import {isPythonSpace} from '../model/common/python-text.js';

const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** The reference's path-segment rule: ASCII [A-Za-z0-9._-], at most 120 bytes, not "." or "..". */
export function isSafeSegment(name: string): boolean {
  return SEGMENT.test(name) && name.length <= 120 && name !== '.' && name !== '..';
}

/**
 * What is wrong with a scenario name, or null. The Python implementation
 * accepts any single path segment (démo-ü, say); so does autoctx, used and
 * hashed exactly as written, except: a name beginning with "." (hidden; the
 * state area is one), a separator (/ or \\), a control character (NUL
 * among them), text that is not well-formed Unicode, whitespace at either end
 * (upstream strips it and would name another folder), more than 255 bytes of
 * UTF-8 (a file system's limit for one name).
 */
export function scenarioNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'it is empty';
  if (name.startsWith('.')) return 'it begins with "." (hidden names, "." and ".." are refused)';
  if (/[/\\]/.test(name)) return 'it holds a path separator';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'it holds a control character';
  if (!name.isWellFormed()) return 'it is not well-formed Unicode';
  if (name.trim() !== name || isPythonSpace(name.charCodeAt(0)) || isPythonSpace(name.charCodeAt(name.length - 1))) return 'it begins or ends with whitespace';
  if (Buffer.byteLength(name, 'utf8') > 255) return 'it is longer than 255 bytes of UTF-8';
  return null;
}

export function isScenarioName(name: string): boolean {
  return scenarioNameProblem(name) === null;
}

/** Validate a scenario name given by the user (scenarioNameProblem). */
export function assertScenarioName(name: string): void {
  const problem = scenarioNameProblem(name);
  if (problem) fail('INVALID_NAME', `invalid scenario name ${JSON.stringify(name)}: ${problem}`, {scenario: name});
}

/** Directory segment for a campaign id: the id itself when safe, else "%" + a digest of it. */
export function campaignSegment(campaignId: string): string {
  if (typeof campaignId !== 'string' || campaignId.trim() === '') fail('INVALID_NAME', 'campaign id must be a non-blank string');
  return isSafeSegment(campaignId) ? campaignId : `%${stableDigest({campaign_path_identity: campaignId})}`;
}

/** File segment for a negative-ledger run id (the reference uses a raw SHA-256 here). */
export function ledgerSegment(runId: string): string {
  return isSafeSegment(runId) ? runId : `%${createHash('sha256').update(runId, 'utf8').digest('hex')}`;
}

const DIGEST = /^[0-9a-f]{64}$/;
const RELEASE_FILE_SEGMENT = /^[A-Za-z0-9._-]{1,64}$/;
function scopeSegment(scope: string): string {
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(scope)) fail('INVALID_NAME', `not a scope: ${JSON.stringify(scope)}`);
  return scope;
}
function digestSegment(digest: string): string {
  if (!DIGEST.test(digest)) fail('INVALID_DIGEST', `not a bundle digest: ${JSON.stringify(digest)}`);
  return digest;
}

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
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > 999_999) fail('INVALID_INPUT', `not a signers change number: ${seq}`);
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
  recordHistoryEntry(digest: string, seq: number): string {
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > 999999) fail('INVALID_INPUT', `not a record history position: ${seq}`);
    return `${this.recordHistoryDir(digest)}${path.sep}${String(seq).padStart(6, '0')}.json`;
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
  curationEntry(seq: number): string {
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > 999999) fail('INVALID_INPUT', `not a curation history position: ${seq}`);
    return path.join(this.curationHistoryDir, `${String(seq).padStart(6, '0')}.json`);
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
  /** A descriptor's file: the version lowercased, so that two names equal under case folding are one file on every file system. */
  releaseVersion(version: string): string {
    if (!RELEASE_FILE_SEGMENT.test(version) || /^\.+$/.test(version)) fail('INVALID_NAME', `not a version name: ${JSON.stringify(version)}`);
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
  releaseReceipt(scope: string, seq: number): string {
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > 999999) fail('INVALID_INPUT', `not a receipt position: ${seq}`);
    return path.join(this.releaseReceiptDir(scope), `${String(seq).padStart(6, '0')}.json`);
  }
  handoffDir(id: string): string {
    if (!isSafeSegment(id)) fail('INVALID_NAME', `not a handoff id: ${JSON.stringify(id)}`);
    return path.join(this.handoffsDir, id);
  }
  handoffRevision(id: string, revision: number): string {
    if (!Number.isSafeInteger(revision) || revision < 1 || revision > 999999) fail('INVALID_INPUT', `not a handoff revision: ${revision}`);
    return path.join(this.handoffDir(id), `${String(revision).padStart(6, '0')}.json`);
  }
  negativeResult(digest: string): string {
    return this.inCandidate(digest, 'negative_result.json');
  }
  causalAttribution(digest: string): string {
    return this.inCandidate(digest, 'causal_attribution.json');
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
    if (!/^RBX-\d{14}-[0-9a-f]{8}$/.test(key)) fail('INVALID_INPUT', `not a rollback execution key: ${JSON.stringify(key)} (RBX-<14 digits>-<8 hex>)`);
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
    if (path.basename(dir) === 'reservation-artifacts' && name.endsWith('.json')) return {kind: 'artifact', candidate: name.slice(0, -5)};
    return null;
  }
  /** A file of negative_result_ledgers/ that autoctx did not name itself. */
  isForeignNegativeLedger(file: string): boolean {
    return file.startsWith(this.negativeLedgersDir + path.sep) && !isOwnNegativeLedgerName(path.basename(file));
  }
  mirror(name: 'playbook' | 'hints'): string {
    return path.join(this.dir, `${name}.md`);
  }
  /** The lock file guarding this scenario's store (src/store/files/lock.ts; a folder of that name is an older autoctx's lock). */
  get lock(): string {
    return path.join(this.contextDir, 'autoctx.lock');
  }
  /** The file the lock is nominally taken on; it need not exist. */
  get lockTarget(): string {
    return path.join(this.contextDir, 'autoctx');
  }
}

/** Names autoctx leaves behind transiently: temp files and locks. The one place these patterns live. */
export const TEMP_FILE = /\.autoctx-[0-9a-z]+\.tmp$/;
/** A lock (a file; a folder for locks an older autoctx took). */
export const LOCK_NAME = /^autoctx\.lock$/;
/** A lock moved aside by a takeover or a release whose process died before removing it, or an owner file prepared by a process that died before publishing it. */
export const STALE_LOCK_NAME = /^autoctx\.lock\.(stale-[0-9a-z]+|owner-[0-9a-f]+\.tmp)$/;
/** The temporary file the Python implementation's atomic writer leaves (<name>.<pid>.<hex>.tmp). */
const UPSTREAM_TEMP_FILE = /\.\d+\.[0-9a-f]{32}\.tmp$/;
/** The file names of the discoverable negative-result copies autoctx writes. */
const NEGATIVE_LEDGER_FILE = /^context-bundle-[0-9a-f]{64}\.json$/;

/** What a name left in a store is: a temporary file (ours, upstream's, or another *.tmp), a lock, or neither. */
export function leftoverKind(file: string, kind: 'file' | 'dir'): 'temp' | 'upstream-temp' | 'other-temp' | 'lock' | 'stale-lock' | null {
  const name = path.basename(file);
  if (STALE_LOCK_NAME.test(name)) return 'stale-lock';
  if (LOCK_NAME.test(name)) return 'lock';
  if (kind === 'file' && TEMP_FILE.test(name)) return 'temp';
  if (kind === 'file' && UPSTREAM_TEMP_FILE.test(name)) return 'upstream-temp';
  if (kind === 'file' && name.endsWith('.tmp')) return 'other-temp';
  return null;
}

/** True for a file in negative_result_ledgers/ that autoctx itself names (others are upstream's or a person's, read as ledgers). */
export function isOwnNegativeLedgerName(name: string): boolean {
  return NEGATIVE_LEDGER_FILE.test(name);
}

export function tempPath(target: string, nonce: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.autoctx-${nonce}.tmp`);
}

/** The team's defaults file at the knowledge root. */
export const TEAM_CONFIG_NAME = 'autoctx.config.json';

/** The name of the per-machine state area inside the knowledge root (ARCHITECTURE §11). */
export const STATE_DIR_NAME = '.state';

/** Paths at the root of the knowledge tree: root-level documents, the state area, the scenarios. */
export class RootPaths {
  constructor(readonly root: string) {}

  get gitignore(): string {
    return path.join(this.root, '.gitignore');
  }
  /** The team's evaluation defaults, committed with the tree. */
  get teamConfig(): string {
    return path.join(this.root, TEAM_CONFIG_NAME);
  }
  /** A temporary file an interrupted write of the root's .gitignore left. */
  isGitignoreTemp(name: string): boolean {
    return /^\.\.gitignore\.autoctx-[0-9a-z]+\.tmp$/.test(name);
  }
  scenarioDir(name: string): string {
    return path.join(this.root, name);
  }
  /** The folder whose presence makes a root-level folder a scenario store. */
  scenarioStore(name: string): string {
    return path.join(this.root, name, 'context_bundles');
  }
  get stateDir(): string {
    return path.join(this.root, STATE_DIR_NAME);
  }
  /** A file in the state area, from safe segments only. */
  stateFile(...segments: string[]): string {
    for (const s of segments) if (!isSafeSegment(s) && !isScenarioName(s)) fail('INVALID_NAME', `not a safe state-area name: ${JSON.stringify(s)}`);
    return path.join(this.stateDir, ...segments);
  }
  /** The state area's own lock (it also guards root-level documents such as .gitignore). */
  get stateLock(): string {
    return path.join(this.stateDir, 'autoctx.lock');
  }
  get stateLockTarget(): string {
    return path.join(this.stateDir, 'autoctx');
  }
  /** The state area ignores itself, whatever the root's .gitignore says. */
  get stateGitignore(): string {
    return path.join(this.stateDir, '.gitignore');
  }
}
