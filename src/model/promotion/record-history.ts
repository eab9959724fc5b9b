import {jsonEqual, stableDigest} from '../../canonical/index.js';
import type {CandidateRecord} from './records.js';

/** What wrote a change of record.json. */
export const RECORD_CAUSES = [
  'init',
  'propose',
  'evaluate',
  'reject',
  'terminal',
  'pointer-move',
  'rollover',
  'migrate',
  'repair',
  'adopt',
] as const;
export type RecordCause = (typeof RECORD_CAUSES)[number];

/**
 * candidates/<digest>/record_history/<seq>.json: record.json as one change
 * left it. Entries are immutable and chained: each names the stable digest
 * of the one before it, so a lost or edited entry breaks the chain, and the
 * last one is the record (or, after a crash between the two writes, one
 * step ahead of it).
 */
export interface RecordHistoryEntry {
  schema_version: 1;
  bundle_digest: string;
  seq: number;
  previous_entry_sha256: string | null;
  cause: RecordCause;
  record: CandidateRecord;
}

/** context_bundles/record_histories.json: since when a scenario keeps record histories. */
export interface HistoryAdoption {
  schema_version: 1;
  scenario: string;
  adopted_at: string;
  /**
   * Candidates whose records existed without a history then (an earlier autoctx, or the Python implementation), sorted.
   */
  predating: string[];
}

export function entryDigest(entry: RecordHistoryEntry): string {
  return stableDigest(entry);
}

/**
 * Two records that differ at most in when they were written: a command run again after it was cut short between its
 * entry and its record.
 */
export function sameButTimes(a: CandidateRecord, b: CandidateRecord): boolean {
  return jsonEqual({...a, created_at: '', updated_at: ''}, {...b, created_at: '', updated_at: ''});
}

export type RecordEvent = 'proposal' | 'screen' | 'confirmation' | 'rejection';

const pairsOf = (r: CandidateRecord | null) => ({
  screen: r?.comparison?.screen_pairs ?? 0,
  later: (r?.comparison?.confirmation_pairs ?? 0) + (r?.comparison?.heldout_pairs ?? 0),
});

/**
 * What one change of a record is in a candidate's history, or null for a
 * change log shows elsewhere or not at all: a pointer move (its promotion,
 * rollback or rollover record tells it), a baseline (init), a policy recorded
 * before the first pair. A rejection is any change into rejected; a change
 * that adds confirmation or held-out pairs, or confirms, is a confirmation;
 * one that adds screen pairs or changes the comparison otherwise is a screen.
 */
export function recordEvent(previous: CandidateRecord | null, next: CandidateRecord): RecordEvent | null {
  if (previous === null) return next.parent_digest === null ? null : 'proposal';
  if (next.lifecycle === 'active' || next.lifecycle === 'superseded') return null;
  if (next.lifecycle === 'rejected') return previous.lifecycle === 'rejected' ? null : 'rejection';
  const [before, after] = [pairsOf(previous), pairsOf(next)];
  if (after.later > before.later || (next.lifecycle === 'confirmed' && previous.lifecycle !== 'confirmed'))
    return 'confirmation';
  if (after.screen > before.screen || !jsonEqual(previous.comparison, next.comparison)) return 'screen';
  return null;
}
