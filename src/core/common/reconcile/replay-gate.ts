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

/** Run one command; a typed refusal is the step's outcome. */
export async function gate(fn: () => Promise<Outcome>, stale?: () => Outcome): Promise<Outcome> {
  try {
    return await fn();
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    if (error.code === 'SIGNING_KEY_REQUIRED') throw error;
    // A promotion whose parent no longer serves: the gate rejected the candidate as stale, with its negative result.
    if (error.code === 'ACTIVE_MOVED' && stale) return {...stale(), reason: error.message};
    return {outcome: 'refused', reason: `${error.code}: ${error.message}`, made: []};
  }
}
