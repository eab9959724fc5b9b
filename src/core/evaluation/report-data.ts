/** What a report shows of a candidate: the data report.ts gathers and report-render.ts renders. */
import type {ConfirmationPolicy} from '../../model/evaluation/policy.js';
import type {ComparisonResult} from '../../model/promotion/records.js';
import type {MatchedTrial} from '../../model/evaluation/trial.js';
import type {ArmScores, LaneSummary} from '../../stats/describe.js';
import type {SideBySide} from './observed/side-by-side.js';
import type {ObservedSummary} from './observed/summary.js';

/** The decision after each recorded pair, in the order the run recorded them: the interval over the looks. */
export interface Look {
  pairs: number;
  lane: MatchedTrial['lane'];
  decision: ComparisonResult['decision'];
  mean_effect: number | null;
  confidence_low: number | null;
  confidence_high: number | null;
  /**
   * The mean of this pair's lane's effects so far (the plotted line follows the dots): the decision's own
   * mean_effect stays the screen mean until the confirmation lane has its minimum pairs, and the
   * confirmation mean through the held-out lane.
   */
  lane_mean: number;
}

export interface ReportData {
  scenario: string;
  candidate_digest: string;
  parent_digest: string;
  lifecycle: string;
  rationale: string;
  comparison: ComparisonResult;
  policy: ConfirmationPolicy;
  looks: Look[];
  /** Each pair's effect (candidate score minus incumbent score), by lane. */
  effects: Array<{lane: MatchedTrial['lane']; fixture: string; seed: number; effect: number}>;
  /** Descriptive summaries of the effects by lane (simple-statistics; never part of a decision). */
  summaries: LaneSummary[];
  /** Each arm's absolute mean score with its interval, over every recorded pair (descriptive). */
  arms: ArmScores | null;
  /** What the evaluator observed beside the scores, per arm (latency, tokens, cost, checks); null when nothing. */
  observed: ObservedSummary | null;
  /** The pairs shown side by side with both arms' artifacts (descriptive). */
  side_by_side: SideBySide[];
}
