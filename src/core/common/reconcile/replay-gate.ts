import {isAutoctxError, rethrowUnless} from '../../../errors.js';
import type {ReconcileStep} from '../../../model/common/reconcile.js';

/** What every replayed command is given: the stage, the scenario, the clock, and the signing options. */
export interface ReplayContext {
  knowledge: string;
  /** Where a replayed command's input files are written (outside the knowledge root). */
  inputs: string;
  scenario: string;
  now: () => Date;
  actor: string | undefined;
  signingKey: string | undefined;
  allowedSigners: string | undefined;
}

/** What became of one replayed change. */
export type Outcome = Pick<ReconcileStep, 'outcome' | 'reason' | 'made'>;

/**
 * The refusals a replayed command's gate gives on the kept side's state (besides every exit 3 and 6): the candidate's
 * lifecycle, what it names no longer being there, a repeat of a curation change.
 */
const GATE_REFUSALS: ReadonlySet<string> = new Set([
  'INVALID_TRANSITION',
  'NOT_CONFIRMED',
  'NOT_SERVEABLE',
  'LINEAGE_MISMATCH',
  'VERSION_NOT_FOUND',
  'ROLLBACK_TARGET_NOT_SERVED',
  'DIGEST_NOT_FOUND',
  'COMPONENT_NOT_FOUND',
  'HANDOFF_NOT_FOUND',
  'TAG_LIMIT',
  'INVALID_INPUT',
  'AUDIT_HOLD',
]);

/** Run one command; a typed refusal is the step's outcome. */
export async function gate(fn: () => Promise<Outcome>, stale?: () => Outcome): Promise<Outcome> {
  try {
    return await fn();
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    // Only a gate's own refusal is a step's outcome; anything else (a key, a lock, a file that does not read) stops
    // reconcile before it writes anything.
    if (!GATE_REFUSALS.has(error.code) && error.exitCode !== 3 && error.exitCode !== 6) throw error;
    // A promotion whose parent no longer serves: the gate rejected the candidate as stale, with its negative result.
    if (error.code === 'ACTIVE_MOVED' && stale) return {...stale(), reason: error.message};
    return {outcome: 'refused', reason: `${error.code}: ${error.message}`, made: []};
  }
}
