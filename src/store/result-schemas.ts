import {problemOf} from './schemas.js';
import resultValidators from './result-validators.generated.js';

/**
 * Validation of the --json results against schemas/result-*.schema.json. Kept
 * apart from the file validators so that no command loads them at start-up;
 * the tests check every command's output with them.
 */
export function resultSchemaProblem(name: `result-${string}`, value: unknown): string | null {
  const v = resultValidators[name];
  if (!v) throw new Error(`no result schema named ${name}`);
  return problemOf(v, value);
}
