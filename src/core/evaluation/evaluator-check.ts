import {stableDigest} from '../../canonical/index.js';
import {fail, isAutoctxError, rethrowUnless} from '../../errors.js';
import {REQUEST_SCHEMA, type EvaluationAnswer, type EvaluationRequest} from '../../evaluator/protocol.js';
import {onInterrupt} from '../../evaluator/run-command.js';
import {createEvaluator} from '../../evaluator/runner.js';
import {readFixtures} from '../../store/index.js';
import {materializeForEvaluation} from '../../store/files/materialize.js';
import {evaluatorTimeout, openScenario, type StoreOptions} from '../common/store-options.js';
import {requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {artifactsProblem, scratchArtifactStore} from '../../store/files/artifacts.js';

export const DEFAULT_CHECK_PAIRS = 2;
export const MAX_CHECK_PAIRS = 20;
/**
 * The cohort every check request names, so that an evaluator (or a person reading its log) can tell a check from a run.
 */
export const CHECK_COHORT = 'autoctx-evaluator-check';

export interface EvaluatorCheckOptions extends StoreOptions {
  evaluator: string;
  evaluatorMode?: 'per-arm' | 'persistent' | undefined;
  fixtures: string;
  pairs?: number | undefined;
  timeoutSeconds?: number | undefined;
}

export interface CheckExchange {
  request: EvaluationRequest;
  answer: EvaluationAnswer | null;
  error: {code: string; message: string; stderr_tail?: string[]} | null;
}

export interface EvaluatorCheckResult {
  status: 'ok' | 'failed';
  scenario: string;
  bundle_digest: string;
  pairs: number;
  exchanges: CheckExchange[];
}

/**
 * Try an evaluator before binding it: a few pairs of the active bundle
 * against itself, each arm in its own scratch copy, every request and answer
 * shown. Nothing is written to the knowledge tree, nothing is bound, and no
 * candidate is ever scored (that would observe it outside its plan and its
 * campaign). Stops at the first failure, which it reports with the
 * evaluator's stderr.
 */
export async function checkEvaluator(options: EvaluatorCheckOptions): Promise<EvaluatorCheckResult> {
  const pairs = options.pairs ?? DEFAULT_CHECK_PAIRS;
  if (!Number.isSafeInteger(pairs) || pairs < 1 || pairs > MAX_CHECK_PAIRS)
    fail('USAGE', `--pairs must be an integer from 1 to ${MAX_CHECK_PAIRS}`);
  const timeoutSeconds = evaluatorTimeout(options.timeoutSeconds);
  const fixtures = readFixtures(options.fixtures).slice(0, pairs);
  const store = openScenario(options);
  const active = requireActive(store);
  const bundle = requireBundle(store, active.bundle_digest);
  // Not a plan: the digest of what the check sends, so that requests carry a well-formed plan_digest no bound plan has.
  const planDigest = stableDigest({
    evaluator_check: {
      scenario: store.scenario,
      bundle_digest: bundle.digest,
      fixtures: fixtures.map((f) => f.fixture_digest),
    },
  });
  // Artifacts of a check go to a scratch folder removed after it: a check writes nothing to the tree.
  const scratch = scratchArtifactStore(store.guard.root);
  const forget = onInterrupt(scratch.remove);
  const evaluator = createEvaluator({
    command: options.evaluator,
    mode: options.evaluatorMode ?? 'per-arm',
    timeoutSeconds,
    concurrency: 1,
    env: {...scratch.env},
  });
  const exchanges: CheckExchange[] = [];
  const bundles = materializeForEvaluation([bundle], onInterrupt);
  try {
    for (const [i, f] of fixtures.entries()) {
      const arms: Array<'candidate' | 'incumbent'> =
        i % 2 === 0 ? ['candidate', 'incumbent'] : ['incumbent', 'candidate'];
      for (const arm of arms) {
        const copy = bundles.armCopy(bundle.digest);
        const request: EvaluationRequest = {
          schema: REQUEST_SCHEMA,
          request_id: `check:${i}:${arm}`,
          arm,
          scenario: store.scenario,
          bundle_digest: bundle.digest,
          bundle_dir: copy.dir,
          evaluator_epoch: bundle.evaluator_epoch,
          cohort: CHECK_COHORT,
          lane: f.lane ?? 'screen',
          fixture: f.fixture,
          fixture_digest: f.fixture_digest,
          seed: i,
          plan_digest: planDigest,
          initial_state: f.initial_state,
          observation: f.observation,
        };
        try {
          const answer = await evaluator.evaluate(request);
          const changed = copy.changed();
          if (changed !== null)
            fail(
              'EVALUATOR_FAILED',
              `the evaluator changed its bundle_dir during the ${arm} arm on ${f.fixture}: ${changed}`,
            );
          const kept = answer.artifacts ? artifactsProblem(scratch.env.AUTOCTX_ARTIFACT_DIR, answer.artifacts) : null;
          if (kept !== null)
            fail('EVALUATOR_FAILED', `evaluator answer for ${arm} on ${f.fixture} (seed ${i}) ${kept}`);
          exchanges.push({request, answer, error: null});
        } catch (error) {
          rethrowUnless(error, isAutoctxError);
          const tail = error.data?.stderr_tail;
          exchanges.push({
            request,
            answer: null,
            error: {
              code: error.code,
              message: error.message,
              ...(Array.isArray(tail) ? {stderr_tail: tail as string[]} : {}),
            },
          });
          return {
            status: 'failed',
            scenario: store.scenario,
            bundle_digest: bundle.digest,
            pairs: fixtures.length,
            exchanges,
          };
        } finally {
          copy.remove();
        }
      }
    }
  } finally {
    await evaluator.close();
    bundles.remove();
    scratch.remove();
    forget();
  }
  return {status: 'ok', scenario: store.scenario, bundle_digest: bundle.digest, pairs: fixtures.length, exchanges};
}
