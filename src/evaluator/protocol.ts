import {scoreProblem} from '../model/evaluation/trial.js';
import type {JsonValue} from '../canonical/index.js';
import {fail, isJsonParseError, rethrowUnless} from '../errors.js';
import {armObservationOf, armObservationProblem, type ArmObservation} from '../model/evaluation/observations.js';

export const REQUEST_SCHEMA = 'autoctx.evaluation-request.v1';

/** One arm of one matched pair, as the evaluator command receives it. */
export interface EvaluationRequest {
  schema: typeof REQUEST_SCHEMA;
  request_id: string;
  arm: 'candidate' | 'incumbent';
  scenario: string;
  bundle_digest: string;
  bundle_dir: string;
  evaluator_epoch: string;
  cohort: string;
  lane: string;
  fixture: string;
  fixture_digest: string;
  seed: number;
  plan_digest: string;
  initial_state: JsonValue;
  observation: JsonValue;
}

/** A score, its validity, and what the evaluator observed beside it (metrics, check verdict, artifacts). */
export interface EvaluationAnswer extends ArmObservation {
  score: number;
  valid: boolean;
}

/**
 * Check one answer: a JSON object with a finite numeric score, an optional
 * boolean validity (default true), and, when given, a fixture digest (an
 * attestation) and a request id that equal the request's; optionally
 * `metrics`, `check_passed` and `artifacts` (model/evaluation/observations.ts), checked
 * strictly. Other keys are ignored. Anything else is an integrity failure.
 */
export function parseAnswer(
  text: string,
  request: EvaluationRequest,
  options: {requireRequestId: boolean},
): EvaluationAnswer {
  const bad = (why: string): never =>
    fail('EVALUATOR_FAILED', `evaluator answer for ${request.arm} on ${request.fixture} (seed ${request.seed}) ${why}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    bad(`is not one JSON object: ${JSON.stringify(text.slice(0, 120))}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) bad('is not a JSON object');
  const a = value as Record<string, unknown>;
  if (typeof a.score !== 'number' || !Number.isFinite(a.score)) bad('has no finite numeric "score"');
  const unrecordable = scoreProblem(a.score);
  if (unrecordable) bad(`has a "score" that ${unrecordable}; nothing was recorded for it`);
  if (a.valid !== undefined && typeof a.valid !== 'boolean') bad('has a "valid" that is not a boolean');
  if (a.fixture_digest !== undefined && a.fixture_digest !== request.fixture_digest)
    bad(`attests fixture ${JSON.stringify(a.fixture_digest)}, not ${request.fixture_digest}`);
  if (a.request_id === undefined && options.requireRequestId) bad('does not echo request_id');
  if (a.request_id !== undefined && a.request_id !== request.request_id)
    bad(`echoes request_id ${JSON.stringify(a.request_id)}, not ${request.request_id}`);
  const observed = armObservationProblem(a);
  if (observed) bad(`${observed}; nothing was recorded for this pair`);
  return {score: a.score as number, valid: (a.valid as boolean | undefined) ?? true, ...armObservationOf(a)};
}
