import path from 'node:path';
import {createHash} from 'node:crypto';
import {stableDigest} from '../canonical/index.js';
import {fail} from '../errors.js';

const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** The reference's path-segment rule: ASCII [A-Za-z0-9._-], at most 120 bytes, not "." or "..". */
export function isSafeSegment(name: string): boolean {
  return SEGMENT.test(name) && name.length <= 120 && name !== '.' && name !== '..';
}

/** Validate a scenario name given by the user. Hidden names are refused too. */
export function assertScenarioName(name: string): void {
  if (typeof name !== 'string' || !isSafeSegment(name) || name.startsWith('.')) {
    fail('INVALID_NAME', `invalid scenario name ${JSON.stringify(name)}: use 1-120 characters from [A-Za-z0-9._-], not starting with "."`, {scenario: name});
  }
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
function digestSegment(digest: string): string {
  if (!DIGEST.test(digest)) fail('INVALID_DIGEST', `not a bundle digest: ${JSON.stringify(digest)}`);
  return digest;
}

/** Every path inside one scenario's store. Nothing else builds paths under the knowledge root. */
export class ScenarioPaths {
  readonly dir: string;
  readonly contextDir: string;

  constructor(
    readonly root: string,
    readonly scenario: string,
  ) {
    assertScenarioName(scenario);
    this.dir = path.join(root, scenario);
    this.contextDir = path.join(this.dir, 'context_bundles');
  }

  get active(): string {
    return path.join(this.contextDir, 'active.json');
  }
  get bundlesDir(): string {
    return path.join(this.contextDir, 'bundles');
  }
  bundle(digest: string): string {
    return path.join(this.bundlesDir, `${digestSegment(digest)}.json`);
  }
  get candidatesDir(): string {
    return path.join(this.contextDir, 'candidates');
  }
  candidateDir(digest: string): string {
    return path.join(this.candidatesDir, digestSegment(digest));
  }
  record(digest: string): string {
    return path.join(this.candidateDir(digest), 'record.json');
  }
  manifestDiff(digest: string): string {
    return path.join(this.candidateDir(digest), 'manifest_diff.json');
  }
  matchedTrials(digest: string): string {
    return path.join(this.candidateDir(digest), 'matched_trials.json');
  }
  evidenceSeal(digest: string): string {
    return path.join(this.candidateDir(digest), 'evidence_seal.json');
  }
  evaluatorPlan(digest: string): string {
    return path.join(this.candidateDir(digest), 'evaluator_plan.json');
  }
  negativeResult(digest: string): string {
    return path.join(this.candidateDir(digest), 'negative_result.json');
  }
  causalAttribution(digest: string): string {
    return path.join(this.candidateDir(digest), 'causal_attribution.json');
  }
  staleTerminalization(digest: string): string {
    return path.join(this.candidateDir(digest), 'stale_terminalization.json');
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
  mirror(name: 'playbook' | 'hints'): string {
    return path.join(this.dir, `${name}.md`);
  }
  /** The lock directory (proper-lockfile) guarding this scenario's store. */
  get lock(): string {
    return path.join(this.contextDir, 'autoctx.lock');
  }
  /** The file the lock is nominally taken on; it need not exist. */
  get lockTarget(): string {
    return path.join(this.contextDir, 'autoctx');
  }
}

/** Names autoctx leaves behind transiently: temp files and lock directories. */
export const TEMP_FILE = /\.autoctx-[0-9a-z]+\.tmp$/;
export const LOCK_DIR = /^autoctx\.lock(\.stale-[0-9a-z]+)?$/;

export function tempPath(target: string, nonce: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.autoctx-${nonce}.tmp`);
}
