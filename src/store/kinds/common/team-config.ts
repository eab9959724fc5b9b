import path from 'node:path';
import {fail, isAutoctxError, rethrowUnless} from '../../../errors.js';
import {readDocument} from '../../documents.js';
import type {RootGuard} from '../../files/fs.js';

/**
 * knowledge/autoctx.config.json: a team's evaluation defaults, per scenario
 * over `defaults`. Read only by the commands that evaluate (screen, confirm,
 * plan export, evaluator check), so a malformed file fails those alone; flags
 * override it. Paths in it are relative to the knowledge root.
 */
export const TEAM_CONFIG_SCHEMA = 'team-config' as const;

export interface EvaluationDefaults {
  evaluator?: string;
  evaluator_mode?: 'per-arm' | 'persistent';
  fixtures?: string;
  policy?: string;
  concurrency?: number;
}

interface TeamConfig {
  schema_version: 1;
  rollback?: {approval_window_days?: number};
  evidence?: EvidenceSettings;
  defaults?: EvaluationDefaults;
  scenarios?: Record<string, EvaluationDefaults>;
}

function readConfig(guard: RootGuard, file: string): TeamConfig | null {
  try {
    return readDocument<TeamConfig>(guard, file, TEAM_CONFIG_SCHEMA);
  } catch (error) {
    // A config a person edits is input: its mistake is exit 2, and names the file, as any bad input does.
    rethrowUnless(error, isAutoctxError);
    fail(
      'CONFIG_INVALID',
      error.message.startsWith(guard.relative(file)) ? error.message : `${guard.relative(file)}: ${error.message}`,
      {file: guard.relative(file)},
    );
  }
}

export interface EvidenceSettings {
  window?: number;
  percent?: number;
  inspection_percent?: number;
}

/** The team's evidence sampling and inspection settings ({} without a file or section). */
export function readEvidenceSettings(guard: RootGuard, file: string): EvidenceSettings {
  return readConfig(guard, file)?.evidence ?? {};
}

/** The emergency rollback's approval window in days (rollback.approval_window_days), or undefined for the default. */
export function readApprovalWindowDays(guard: RootGuard, file: string): number | undefined {
  return readConfig(guard, file)?.rollback?.approval_window_days;
}

/** The defaults for one scenario (its section over `defaults`), file paths made absolute; {} without a file. */
export function readEvaluationDefaults(guard: RootGuard, file: string, scenario: string): EvaluationDefaults {
  const config = readConfig(guard, file);
  if (!config) return {};
  const merged: EvaluationDefaults = {...config.defaults, ...config.scenarios?.[scenario]};
  const root = path.dirname(file);
  if (merged.fixtures !== undefined) merged.fixtures = path.resolve(root, merged.fixtures);
  if (merged.policy !== undefined) merged.policy = path.resolve(root, merged.policy);
  return merged;
}
