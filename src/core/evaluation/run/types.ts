import type {ContextBundle} from '../../../model/bundle/bundle.js';
import type {CampaignFalsePromotionPolicy} from '../../../model/evaluation/campaign.js';
import type {BoundPlan} from '../../../model/evaluation/evaluator-plan.js';
import type {Fixture} from '../../../model/evaluation/fixtures.js';
import type {ConfirmationPolicy} from '../../../model/evaluation/policy.js';
import type {CandidateRecord, ComparisonResult} from '../../../model/promotion/records.js';
import type {MatchedTrial, TrialLane} from '../../../model/evaluation/trial.js';
import type {RunJournal, ScenarioStore} from '../../../store/index.js';
import type {RunningComparison} from '../../../model/evaluation/comparison.js';
import type {StoreOptions} from '../../common/store-options.js';
import type {PairObservation} from '../../../model/evaluation/observations.js';

export interface ProgressEvent {
  type: 'plan' | 'pair' | 'done';
  lane?: TrialLane;
  fixture?: string;
  seed?: number;
  counts: Record<TrialLane, number>;
  planned: Record<TrialLane, number>;
  decision: ComparisonResult | null;
  min_effect: number;
  /** Per lane, the fewest and the most pairs the stopping rule can record there (never more than planned). */
  reach: Record<TrialLane, {min: number; max: number}>;
}

export type EvaluateStatus = 'screened' | 'confirmed' | 'rejected' | 'inconclusive' | 'needs_more_evidence';

export interface EvaluateResult {
  status: EvaluateStatus;
  scenario: string;
  candidate_digest: string;
  parent_digest: string;
  lifecycle: CandidateRecord['lifecycle'];
  comparison: ComparisonResult;
  pairs_evaluated: number;
  pairs_recorded: number;
  plan_digest: string;
  /** The plan a --rebind replaced. */
  superseded_plan_digest?: string;
}

/**
 * What a run is driven with: where it stops (screen: after the screen lane), how many pairs at once, where progress
 * goes.
 */
export interface DriveOptions extends StoreOptions {
  mode: 'screen' | 'confirm';
  concurrency?: number | undefined;
  /** Seconds for an audit the run calls. */
  timeoutSeconds?: number | undefined;
  onProgress?: ((event: ProgressEvent) => void) | undefined;
}

/** Everything one evaluation run works with, resolved and checked. */
export interface Run {
  store: ScenarioStore;
  candidate: ContextBundle;
  incumbent: ContextBundle;
  record: CandidateRecord;
  policy: ConfirmationPolicy;
  plan: BoundPlan;
  /** The fixtures of the plan by digest (empty for a run of results brought back). */
  fixtures: Map<string, Fixture>;
  trials: MatchedTrial[];
  /** What the evaluator observed of the recorded pairs beside their scores, by pair key (descriptive only). */
  observations: Map<string, PairObservation>;
  options: DriveOptions;
  campaign: {id: string; policy: CampaignFalsePromotionPolicy} | null;
  /** The bytes of evaluator_plan.json as bound, compared before every arm. */
  planText: string | null;
  /** Releases the run's lock (held from prepareRun until the caller ends the run). */
  release: () => Promise<void>;
  /** The run's journal of pairs not yet folded into the evidence (opened when the run is driven). */
  journal: RunJournal | null;
  /** How many of the last trials are in the journal only. */
  unfolded: number;
  /** The decision over the trials, kept up to date pair by pair. */
  running: RunningComparison | null;
  /** Set when a commit found the record changed under the run (rejected, or serving): the run records nothing more. */
  halted: CandidateRecord['lifecycle'] | null;
  /** The plan this run's rebind superseded, or null. */
  rebound: string | null;
}
