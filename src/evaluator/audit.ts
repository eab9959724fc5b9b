import {runCommand} from './run-command.js';
import {isJsonParseError, rethrowUnless} from '../errors.js';

export type AuditCheckpoint = 'pre_promotion' | 'inconclusive_gate' | 'integrity_alert';
export type AuditOutcome = 'advisory' | 'review_required' | 'safe_pause_recommended';

export interface AuditResult {
  outcome: AuditOutcome | 'unreachable';
  detail: string;
}

/**
 * Ask the audit command about a checkpoint: the payload on stdin, one JSON
 * answer {"outcome": ...} on stdout. A failure of any kind is "unreachable",
 * which callers treat as a hold: an audit never fails open.
 */
export async function runAudit(
  command: string,
  checkpoint: AuditCheckpoint,
  payload: Record<string, unknown>,
  timeoutSeconds: number,
): Promise<AuditResult> {
  const r = await runCommand(command, `${JSON.stringify({checkpoint, ...payload})}\n`, timeoutSeconds * 1000);
  if (r.timedOut) return {outcome: 'unreachable', detail: `the audit timed out after ${timeoutSeconds}s`};
  if (r.code !== 0) return {outcome: 'unreachable', detail: `the audit exited ${r.code ?? r.signal}`};
  try {
    const answer = JSON.parse(r.stdout.trim()) as {outcome?: unknown} | null;
    if (answer === null) return {outcome: 'unreachable', detail: 'the audit did not answer one JSON object'};
    if (
      answer.outcome === 'advisory' ||
      answer.outcome === 'review_required' ||
      answer.outcome === 'safe_pause_recommended'
    )
      return {outcome: answer.outcome, detail: ''};
    return {outcome: 'unreachable', detail: `the audit answered an unknown outcome ${JSON.stringify(answer.outcome)}`};
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    return {outcome: 'unreachable', detail: 'the audit did not answer one JSON object'};
  }
}
