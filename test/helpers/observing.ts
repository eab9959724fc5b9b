import path from 'node:path';
import {PROJECT_ROOT} from './paths.js';
import {FIXTURES_12, POLICY_SMALL, type Tree} from './pipeline.js';

/** A test evaluator whose answers carry metrics, a checker verdict and artifacts besides the score. */
export const OBSERVING = path.join(PROJECT_ROOT, 'test/fixtures/evaluators/observing.js');

/** Screen or confirm candidate `c` with the observing evaluator (persistent), 12 fixtures and the small policy. */
export function observingRun(
  t: Tree,
  command: 'screen' | 'confirm',
  c: string,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
) {
  return t.cli(
    [
      command,
      c,
      '--evaluator',
      `node ${OBSERVING}`,
      '--evaluator-mode',
      'persistent',
      '--fixtures',
      FIXTURES_12,
      '--policy',
      POLICY_SMALL,
      '--quiet',
      ...extra,
    ],
    env,
  );
}

/** A fresh tree with one proposed candidate `c` that changes the playbook and the routing. */
export function proposedCandidate(tree: () => Tree): {t: Tree; c: string} {
  const t = tree();
  const c = t.propose('b', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  return {t, c};
}
