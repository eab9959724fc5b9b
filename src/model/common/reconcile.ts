import {stableDigest} from '../../canonical/index.js';

/**
 * What `autoctx reconcile` did with one state change the other side of a merge recorded: made it again on the kept
 * side through the gate its command applies, or recorded why not.
 */
export type ReconcileStepKind =
  | 'candidate'
  | 'promotion'
  | 'rejection'
  | 'rollback'
  | 'rollover'
  | 'transition'
  | 'curation'
  | 'handoff'
  | 'not-replayed';

/**
 * - `applied`: the command ran again and did what it did on the other side (with new ids and times);
 * - `stale`: a promotion whose parent no longer serves, recorded by the gate as a stale rejection;
 * - `refused`: the gate (or the step's precondition) refused it; `reason` says why;
 * - `already`: the kept side had already done it;
 * - `kept`: the other side's files were kept as they are (content the kept side lacked: a proposal, an evaluation);
 * - `superseded`: both sides changed the same thing; the kept side's change stands, the other's stays in git.
 */
export type ReconcileOutcome = 'applied' | 'stale' | 'refused' | 'already' | 'kept' | 'superseded';

export interface SourceFile {
  /** Relative to the scenario folder, `/`-separated. */
  path: string;
  /** SHA-256 of the file's bytes on the other side. */
  sha256: string;
}

export interface ReconcileStep {
  kind: ReconcileStepKind;
  /** What it was about: a bundle digest, a scope and version, a handoff id. */
  subject: string;
  /** When the other side made it (its own time). */
  at: string;
  actor: string | null;
  rationale: string | null;
  outcome: ReconcileOutcome;
  reason: string | null;
  /** The other side's files this step stands for (they stay in git at the other side's commit). */
  source: SourceFile[];
  /** The files the replay wrote that tell it (relative to the scenario folder): each must exist. */
  made: string[];
}

export interface ReconcileSide {
  commit: string;
  /** Which side of the merge: the branch merged into (ours) or the one merged (theirs). */
  side: 'ours' | 'theirs';
}

/** context_bundles/reconciles/<sha256>.json: one reconcile of one scenario, named by its own digest. */
export interface ReconcileRecord {
  schema_version: 1;
  scenario: string;
  reconciled_at: string;
  actor: string;
  kept: ReconcileSide;
  other: ReconcileSide;
  base: string;
  steps: ReconcileStep[];
}

export function reconcileDigest(r: ReconcileRecord): string {
  return stableDigest(r);
}

/** One line for a step, as the plan and `log` print it. */
export function describeStep(s: ReconcileStep): string {
  const who = s.actor ? ` by ${s.actor}` : '';
  const what = `${s.kind} ${s.subject}${who} (${s.at})`;
  const why = s.reason ? `: ${s.reason}` : '';
  return `${what} → ${s.outcome}${why}`;
}
