/** The rules for names that become path segments: scenarios, campaigns, ledgers, scopes, digests. */
import {createHash} from 'node:crypto';
import {stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {isPythonSpace} from '../../model/common/python-text.js';

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
  if (name.trim() !== name || isPythonSpace(name.charCodeAt(0)) || isPythonSpace(name.charCodeAt(name.length - 1)))
    return 'it begins or ends with whitespace';
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
  if (typeof campaignId !== 'string' || campaignId.trim() === '')
    fail('INVALID_NAME', 'campaign id must be a non-blank string');
  return isSafeSegment(campaignId) ? campaignId : `%${stableDigest({campaign_path_identity: campaignId})}`;
}

/** File segment for a negative-ledger run id (the reference uses a raw SHA-256 here). */
export function ledgerSegment(runId: string): string {
  return isSafeSegment(runId) ? runId : `%${createHash('sha256').update(runId, 'utf8').digest('hex')}`;
}

const DIGEST = /^[0-9a-f]{64}$/;
/** A release scope as a folder name (INVALID_NAME otherwise). */
export function scopeSegment(scope: string): string {
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(scope)) fail('INVALID_NAME', `not a scope: ${JSON.stringify(scope)}`);
  return scope;
}
/** A bundle digest as a file name segment (INVALID_DIGEST otherwise). */
export function digestSegment(digest: string): string {
  if (!DIGEST.test(digest)) fail('INVALID_DIGEST', `not a bundle digest: ${JSON.stringify(digest)}`);
  return digest;
}
