import {AutoctxError, fail} from '../../../errors.js';
import type {BoundPlan} from '../../../model/evaluation/evaluator-plan.js';
import {assignLanes, cohortDraw, type Fixture} from '../../../model/evaluation/fixtures.js';
import {
  NEW_PLAN_CONFIRMATION_POLICY,
  validateConfirmationPolicy,
  type ConfirmationPolicy,
} from '../../../model/evaluation/policy.js';
import {readInputJson} from '../../../store/index.js';

/**
 * The policy of a plan: the bound plan's when no file is given; a file's
 * fields over the bound plan's policy (so a plan bound earlier, under other
 * defaults, is asked for again as it was), or over `defaults` for a new plan
 * (autoctx's defaults for new plans; migration passes the reference's).
 */
export function loadPolicy(
  file: string | undefined,
  bound: BoundPlan | null,
  defaults: Readonly<ConfirmationPolicy> = NEW_PLAN_CONFIRMATION_POLICY,
): ConfirmationPolicy {
  if (file === undefined) return bound?.plan.confirmation_policy ?? {...defaults};
  const value = readInputJson(file);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('SCHEMA_VIOLATION', `${file}: a policy must be a JSON object`);
  try {
    return validateConfirmationPolicy({...(bound?.plan.confirmation_policy ?? defaults), ...value});
  } catch (error) {
    if (error instanceof AutoctxError) throw new AutoctxError(error.code, `${file}: ${error.message}`, {file});
    throw error;
  }
}

/**
 * A bound plan's lanes are re-derived as it was bound: fixtures naming no lane
 * take the lane the bound plan gave them (plans bound before the screen was
 * drawn by cohort split in digest order). A fixture the bound plan lacks makes
 * another plan anyway; it is then split as a new plan would be.
 */
export function lanesFor(
  fixtures: readonly Fixture[],
  policy: ConfirmationPolicy,
  cohort: string,
  bound: BoundPlan | null,
): ReturnType<typeof assignLanes> {
  const drawn = assignLanes(fixtures, policy, cohortDraw(cohort));
  if (!bound) return drawn;
  const boundLane = new Map(bound.plan.units.map((u) => [u.fixture_digest, u.lane]));
  if (!fixtures.every((f) => f.lane !== undefined || boundLane.has(f.fixture_digest))) return drawn;
  return fixtures.map((f) => ({...f, lane: f.lane ?? boundLane.get(f.fixture_digest)!}));
}
