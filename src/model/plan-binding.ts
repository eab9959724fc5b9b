import type {BoundPlan} from './evaluator-plan.js';
import type {MatchedTrial} from './trial.js';

/** What a recorded trial must agree on with the plan it was recorded under. */
export type PlannedTrial = Pick<MatchedTrial, 'candidate_digest' | 'incumbent_digest' | 'evaluator_epoch' | 'cohort' | 'fixture' | 'fixture_digest' | 'seed' | 'lane' | 'pair_key'>;

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
    if (t.lane !== unit.u.lane || t.fixture !== unit.u.fixture) problems.push(`${name} has lane "${t.lane}" and fixture "${t.fixture}", the plan's unit "${unit.u.lane}" and "${unit.u.fixture}"`);
    if (t.candidate_digest !== p.candidate_digest) problems.push(`${name} is for candidate ${t.candidate_digest}, the plan for ${p.candidate_digest}`);
    if (t.incumbent_digest !== p.incumbent_digest) problems.push(`${name} is against incumbent ${String(t.incumbent_digest)}, the plan against ${String(p.incumbent_digest)}`);
    if (t.evaluator_epoch !== p.evaluator_epoch) problems.push(`${name} has evaluator epoch "${t.evaluator_epoch}", the plan "${p.evaluator_epoch}"`);
    if (t.cohort !== p.cohort) problems.push(`${name} has cohort "${t.cohort}", the plan "${p.cohort}"`);
  }
  // Plan order within each lane: no recorded unit after a unit of its lane that is missing.
  const gap = new Map<string, string>();
  for (const u of p.units) {
    const key = unitKey(u.fixture_digest, u.seed);
    if (!recorded.has(key)) {
      if (!gap.has(u.lane)) gap.set(u.lane, `${u.fixture} seed ${u.seed}`);
    } else if (gap.has(u.lane)) {
      problems.push(`the ${u.lane} unit ${u.fixture} seed ${u.seed} is recorded, but ${gap.get(u.lane)} before it in plan order is not: runs record their lane's units in plan order`);
    }
  }
  return problems;
}
