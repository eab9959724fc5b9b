import fs from 'node:fs';
import path from 'node:path';

export interface HookCase {
  knowledge: string;
  project: string;
  env: NodeJS.ProcessEnv;
}

/**
 * The budget a case runs with unless it sets its own: the most the
 * configuration allows (just under the installed 5 s timeout). These tests
 * assert what a hook delivers, not how fast; on a loaded CI machine a run's
 * fsyncs can stall past the 2 s default, and a hook past its budget rightly
 * prints nothing. The budget's own behaviour is tested with a budget set.
 */
export const CASE_BUDGET_MS = 4500;

/**
 * A fresh case for the hook as the hosts run it: a copy of `template` as the
 * knowledge tree, a project folder, and a per-user configuration that enables
 * the hook for that project (or the `config` text given), under `dir`.
 */
export function hookCase(
  dir: string,
  template: string,
  settings: Record<string, unknown> = {},
  config?: string,
): HookCase {
  const root = path.join(dir, `case-${Math.random().toString(16).slice(2)}`);
  const knowledge = path.join(root, 'knowledge');
  const project = path.join(root, 'project');
  fs.mkdirSync(project, {recursive: true});
  fs.cpSync(template, knowledge, {recursive: true});
  const cfg = path.join(root, 'config');
  fs.mkdirSync(path.join(cfg, 'autoctx'), {recursive: true});
  fs.writeFileSync(
    path.join(cfg, 'autoctx/config.json'),
    config ??
      JSON.stringify({
        schema_version: 1,
        hooks: {
          projects: {[project]: {knowledge, scenario: 'demo', enabled: true, budget_ms: CASE_BUDGET_MS, ...settings}},
        },
      }),
  );
  return {knowledge, project, env: {XDG_CONFIG_HOME: cfg, HOME: root, PATH: process.env.PATH}};
}
