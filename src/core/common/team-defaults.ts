import {fail} from '../../errors.js';
import {TEAM_CONFIG_NAME, type EvaluationDefaults} from '../../store/index.js';
import {openKnowledge, type StoreOptions} from './store-options.js';

/** What the evaluating commands may take from knowledge/autoctx.config.json; a flag given always wins. */
export interface DefaultableOptions extends StoreOptions {
  evaluator?: string | undefined;
  evaluatorMode?: 'per-arm' | 'persistent' | 'external' | undefined;
  fixtures?: string | undefined;
  policyFile?: string | undefined;
  concurrency?: number | undefined;
}

/**
 * The options with the team's defaults for the scenario filled in where no
 * flag was given (`take` says which: plan export takes no evaluator from the
 * file, it names an engine). What is still missing after that is a usage
 * error naming the flag and the file.
 */
export function withTeamDefaults<T extends DefaultableOptions>(
  options: T,
  take: ReadonlyArray<keyof EvaluationDefaults> = ['evaluator', 'evaluator_mode', 'fixtures', 'policy', 'concurrency'],
): T & {fixtures: string} {
  const knowledge = openKnowledge(options);
  const d = knowledge.evaluationDefaults(knowledge.resolveScenario(options.scenario));
  const pick = <K extends keyof EvaluationDefaults>(k: K) => (take.includes(k) ? d[k] : undefined);
  const merged = {
    ...options,
    evaluator: options.evaluator ?? pick('evaluator'),
    evaluatorMode: options.evaluatorMode ?? pick('evaluator_mode'),
    fixtures: options.fixtures ?? pick('fixtures'),
    policyFile: options.policyFile ?? pick('policy'),
    concurrency: options.concurrency ?? pick('concurrency'),
  };
  const missing = (flag: string, key: string) =>
    fail('USAGE', `${flag} is required: give it, or set "${key}" in ${TEAM_CONFIG_NAME} at the knowledge root`);
  if (merged.fixtures === undefined) missing('--fixtures', 'fixtures');
  if (take.includes('evaluator') && merged.evaluator === undefined) missing('--evaluator', 'evaluator');
  return merged as T & {fixtures: string};
}
