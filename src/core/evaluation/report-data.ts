/** What a report shows of a candidate: the data report.ts gathers and report-render.ts renders. */
import type {ConfirmationPolicy} from '../../model/evaluation/policy.js';
import type {ComparisonResult} from '../../model/promotion/records.js';
import type {MatchedTrial} from '../../model/evaluation/trial.js';
import type {LaneSummary} from '../../stats/describe.js';

/** The decision after each recorded pair, in the order the run recorded them: the interval over the looks. */
export interface Look {
  pairs: number;
  lane: MatchedTrial['lane'];
  decision: ComparisonResult['decision'];
  mean_effect: number | null;
  confidence_low: number | null;
  confidence_high: number | null;
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
}
