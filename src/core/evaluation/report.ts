import {fail} from '../../errors.js';
import {RunningComparison} from '../../model/evaluation/comparison.js';
import {validateConfirmationPolicy} from '../../model/evaluation/policy.js';
import {describeArms, describeEffects, type ArmScores} from '../../stats/describe.js';
import {assertOutputFolder, ensureOutputFolder, writeOutputFile} from '../../store/io/outputs.js';
import {openScenario, type StoreOptions} from '../common/store-options.js';
import {reportHtml, reportMarkdown} from './report-render.js';
import {resolveDigest} from '../common/resolve.js';
import {readRecord} from '../../store/kinds/promotion/candidate-record.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {readEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {readPlan} from '../../store/kinds/evaluation/evaluator-plan.js';
import type {Look, ReportData} from './report-data.js';
import {readTrialObservations} from '../../store/kinds/evaluation/trial-observations.js';
import {artifactDirFor} from '../../store/files/artifacts.js';
import {summarizeObservations, type ObservedSummary} from './observed/summary.js';
import {sideBySide} from './observed/side-by-side.js';

export type {Look, ReportData} from './report-data.js';

/**
 * What a report shows of a candidate, from its record and its evidence only:
 * the recorded comparison, the decision replayed after each pair in the
 * plan's order (the interval over the looks), each pair's effect, and a
 * descriptive summary of the effects by lane. Reads, never writes.
 */
export function reportData(options: StoreOptions & {candidate: string; artifacts?: string | undefined}): ReportData {
  const store = openScenario(options);
  const digest = resolveDigest(store, options.candidate);
  const record = readRecord(store, digest);
  if (!record) fail('INVALID_TRANSITION', `bundle ${digest} is not a proposed candidate (no record.json)`);
  const bundle = requireBundle(store, digest);
  if (bundle.parent_digest === null)
    fail('INVALID_TRANSITION', `bundle ${digest} is a baseline: it was never compared`);
  if (!record.comparison)
    fail('INVALID_TRANSITION', `candidate ${digest} has no recorded comparison yet (run autoctx screen or confirm)`);
  const evidence = readEvidence(store, digest);
  const policySource = evidence?.confirmation_policy ?? record.confirmation_policy;
  if (!evidence || !policySource)
    fail('INVALID_TRANSITION', `candidate ${digest} has no evidence bound to a policy to report on`);
  const policy = validateConfirmationPolicy(policySource);
  // The order the run recorded: the plan's units; evidence in its stored order where there is no plan.
  const plan = readPlan(store, digest);
  const position = new Map((plan?.plan.units ?? []).map((u, i) => [`${u.fixture_digest}\u0000${u.seed}`, i]));
  const laneRank = {screen: 0, confirmation: 1, heldout: 2} as const;
  const ordered = [...evidence.trials].sort(
    (a, b) =>
      (position.get(`${a.fixture_digest}\u0000${a.seed}`) ?? laneRank[a.lane] * 1e9) -
      (position.get(`${b.fixture_digest}\u0000${b.seed}`) ?? laneRank[b.lane] * 1e9),
  );
  const observations = readTrialObservations(store, digest);
  const running = new RunningComparison(bundle, policy);
  const laneSums = {screen: {n: 0, sum: 0}, confirmation: {n: 0, sum: 0}, heldout: {n: 0, sum: 0}};
  const looks: Look[] = ordered.map((t, i) => {
    running.add(t);
    const r = running.result();
    const lane = laneSums[t.lane];
    lane.n++;
    lane.sum += t.candidate_score - t.incumbent_score;
    return {
      pairs: i + 1,
      lane: t.lane,
      decision: r.decision,
      mean_effect: r.mean_effect,
      confidence_low: r.confidence_low,
      confidence_high: r.confidence_high,
      lane_mean: lane.sum / lane.n,
    };
  });
  const effects = ordered.map((t) => ({
    lane: t.lane,
    fixture: t.fixture,
    seed: t.seed,
    effect: t.candidate_score - t.incumbent_score,
  }));
  return {
    scenario: store.scenario,
    candidate_digest: digest,
    parent_digest: bundle.parent_digest,
    lifecycle: record.lifecycle,
    rationale: record.rationale,
    comparison: record.comparison,
    policy,
    looks,
    effects,
    summaries: describeEffects(effects),
    arms: describeArms(evidence.trials),
    observed: summarizeObservations(ordered, observations),
    side_by_side: sideBySide(ordered, observations, artifactDirFor(store.guard.root, options.artifacts)),
  };
}

export interface ReportResult {
  status: 'ok';
  scenario: string;
  candidate_digest: string;
  markdown: string | null;
  html: string | null;
  /** Each arm's mean score and interval, as the report shows them. */
  arms: ArmScores | null;
  /** Each arm's metrics and checks, as the report shows them (null: nothing observed). */
  observed: ObservedSummary | null;
  /** The pairs the report shows side by side, and each artifact's digest and whether it is kept (not its text). */
  side_by_side: Array<{
    fixture: string;
    seed: number;
    lane: string;
    difference: number;
    reasons: string[];
    artifacts: Array<{name: string; candidate: string | null; incumbent: string | null; kept: [boolean, boolean]}>;
  }>;
}

/**
 * Write report-<digest12>.md and .html into a folder, created when missing (both or, if the folder is refused, none).
 */
export function writeReport(
  options: StoreOptions & {candidate: string; out: string; artifacts?: string | undefined},
): ReportResult {
  const data = reportData(options);
  const base = `${options.out.replace(/\/+$/, '')}/report-${data.candidate_digest.slice(0, 12)}`;
  ensureOutputFolder(options.out);
  assertOutputFolder(`${base}.md`);
  writeOutputFile(`${base}.md`, reportMarkdown(data));
  writeOutputFile(`${base}.html`, reportHtml(data));
  return {
    status: 'ok',
    scenario: data.scenario,
    candidate_digest: data.candidate_digest,
    markdown: `${base}.md`,
    html: `${base}.html`,
    arms: data.arms,
    observed: data.observed,
    side_by_side: data.side_by_side.map((p) => ({
      fixture: p.fixture,
      seed: p.seed,
      lane: p.lane,
      difference: p.difference,
      reasons: p.reasons,
      artifacts: p.candidate.artifacts.map((c, i) => {
        const inc = p.incumbent.artifacts[i]!;
        return {
          name: c.name,
          candidate: c.digest,
          incumbent: inc.digest,
          kept: [c.kept, inc.kept] as [boolean, boolean],
        };
      }),
    })),
  };
}
