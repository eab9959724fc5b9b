import {RunningComparison, type ComparisonSubject} from './comparison.js';
import type {BoundPlan} from './evaluator-plan.js';
import type {ConfirmationPolicy} from './policy.js';
import type {ComparisonResult} from '../promotion/records.js';
import type {MatchedTrial, TrialLane} from './trial.js';

/** What a recorded trial must agree on with the plan it was recorded under. */
export type PlannedTrial = Pick<
  MatchedTrial,
  | 'candidate_digest'
  | 'incumbent_digest'
  | 'evaluator_epoch'
  | 'cohort'
  | 'fixture'
  | 'fixture_digest'
  | 'seed'
  | 'lane'
  | 'pair_key'
>;

const unitKey = (fixtureDigest: string, seed: number) => `${fixtureDigest}\u0000${seed}`;

/**
 * Why recorded trials are not what a run of this plan records, one line per
 * problem (empty: they are). Each trial must be one unit of the plan
 * (fixture digest and seed), with the unit's lane and fixture name and the
 * plan's candidate, incumbent, evaluator epoch and cohort; and within each
 * lane the recorded units are the first ones of that lane in plan order,
 * since runs commit pairs in plan order and never skip one (a unit missing
 * before a recorded one was not evaluated by autoctx).
 *
 * @param plan the bound plan (either shape of evaluator_plan.json)
 * @param trials the trials as recorded
 * @returns the problems, each naming the trial by its pair key
 * @example
 * trialPlanProblems(plan, trials) // [] for the evidence of any autoctx run of that plan
 */
export function trialPlanProblems(plan: BoundPlan, trials: readonly PlannedTrial[]): string[] {
  const p = plan.plan;
  const units = new Map(p.units.map((u, index) => [unitKey(u.fixture_digest, u.seed), {u, index}]));
  const problems: string[] = [];
  const recorded = new Set<string>();
  for (const t of trials) {
    const key = unitKey(t.fixture_digest, t.seed);
    const unit = units.get(key);
    const name = `trial ${t.pair_key}`;
    if (!unit) {
      problems.push(`${name} (fixture ${t.fixture_digest}, seed ${t.seed}) is not a unit of the bound plan`);
      continue;
    }
    recorded.add(key);
    if (t.lane !== unit.u.lane || t.fixture !== unit.u.fixture)
      problems.push(
        `${name} has lane "${t.lane}" and fixture "${t.fixture}", the plan's unit "${unit.u.lane}" and ` +
          `"${unit.u.fixture}"`,
      );
    if (t.candidate_digest !== p.candidate_digest)
      problems.push(`${name} is for candidate ${t.candidate_digest}, the plan for ${p.candidate_digest}`);
    if (t.incumbent_digest !== p.incumbent_digest)
      problems.push(
        `${name} is against incumbent ${String(t.incumbent_digest)}, the plan against ${String(p.incumbent_digest)}`,
      );
    if (t.evaluator_epoch !== p.evaluator_epoch)
      problems.push(`${name} has evaluator epoch "${t.evaluator_epoch}", the plan "${p.evaluator_epoch}"`);
    if (t.cohort !== p.cohort) problems.push(`${name} has cohort "${t.cohort}", the plan "${p.cohort}"`);
  }
  // Plan order within each lane: no recorded unit after a unit of its lane that is missing.
  const gap = new Map<string, string>();
  for (const u of p.units) {
    const key = unitKey(u.fixture_digest, u.seed);
    if (!recorded.has(key)) {
      if (!gap.has(u.lane)) gap.set(u.lane, `${u.fixture} seed ${u.seed}`);
    } else if (gap.has(u.lane)) {
      problems.push(
        `the ${u.lane} unit ${u.fixture} seed ${u.seed} is recorded, but ${gap.get(u.lane)} before it in ` +
          `plan order is not: runs record their lane's units in plan order`,
      );
    }
  }
  return problems;
}

/**
 * The lane whose units a decision asks for next, or null when it asks for
 * none: the engine's rule, shared with the check of recorded evidence. Under a
 * campaign, held-out pairs wait until `heldoutReady` says the campaign's
 * confirmation blocks are ready.
 */
export function laneAfter(decision: ComparisonResult | null, heldoutReady: () => boolean): TrialLane | null {
  if (decision === null || decision.decision === 'needs_screen') return 'screen';
  if (decision.decision === 'needs_confirmation') return 'confirmation';
  if (decision.decision === 'needs_heldout') return heldoutReady() ? 'heldout' : 'confirmation';
  return null;
}

/**
 * Why recorded trials are more than the stopping rule lets a run record (empty:
 * they are not). A run applies its lane's units in plan order and, after each
 * pair, asks the decision of the trials so far which lane comes next; a trial
 * left over once the decision stops asking for its lane was not recorded by a
 * run. Under a campaign a run may go on with confirmation pairs where the
 * decision asks for held-out ones (until the campaign's blocks are ready),
 * which this check allows while confirmation trials remain; a stop for
 * futility is not checked here. `campaign` says whether the plan ran under
 * one (its additions say so for autoctx's plans; for the Python
 * implementation's, its campaign ledger: store/kinds/campaign-ledger.ts
 * planCampaign). Call it on trials that are units of the plan.
 *
 * @example
 * stoppingRuleProblems(candidate, plan, trials, policy) // [] for any autoctx run
 */
export function stoppingRuleProblems(
  candidate: ComparisonSubject,
  plan: BoundPlan,
  trials: readonly MatchedTrial[],
  policy: ConfirmationPolicy,
  campaign: boolean = plan.additions.campaign_id !== null && plan.additions.campaign_id !== undefined,
): string[] {
  const order = new Map(plan.plan.units.map((u, index) => [unitKey(u.fixture_digest, u.seed), index]));
  const lanes: Record<TrialLane, MatchedTrial[]> = {screen: [], confirmation: [], heldout: []};
  for (const t of trials) lanes[t.lane].push(t);
  for (const rows of Object.values(lanes))
    rows.sort((a, b) => order.get(unitKey(a.fixture_digest, a.seed))! - order.get(unitKey(b.fixture_digest, b.seed))!);
  const next: Record<TrialLane, number> = {screen: 0, confirmation: 0, heldout: 0};
  // The decision after each trial, kept up to date one trial at a time (equal to evaluateMatchedTrials over the
  // prefix).
  const running = new RunningComparison(candidate, policy);
  let applied = 0;
  let decision: ComparisonResult | null = null;
  for (;;) {
    decision = applied === 0 ? null : running.result();
    const lane = laneAfter(decision, () => !campaign || next.confirmation >= lanes.confirmation.length);
    if (lane === null || next[lane] >= lanes[lane].length) break;
    running.add(lanes[lane][next[lane]++]!);
    applied++;
  }
  if (applied === trials.length) return [];
  const asked = decision === null ? 'nothing' : `"${decision.decision}"`;
  const extra = (Object.keys(lanes) as TrialLane[]).flatMap((lane) => lanes[lane].slice(next[lane]));
  return extra.map(
    (t) =>
      `trial ${t.pair_key} (${t.lane}) was recorded after the decision of the trials before it (${asked}) ` +
      `stopped asking for ${t.lane} pairs`,
  );
}
