import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {parseJsonUtf8} from '../../canonical/index.js';
import {fail, isSystemError, rethrowUnless, isAutoctxError} from '../../errors.js';
import {schemaProblem} from '../schemas.js';

/**
 * One person's machine settings, outside any tree and never committed:
 * $XDG_CONFIG_HOME/autoctx/config.json (default ~/.config/autoctx/config.json).
 * The agent-host hook opt-in and the signing key live here, for the features
 * that use them; no command reads it before those need it.
 */
export interface UserConfig {
  schema_version: 1;
  hooks?: {enabled?: boolean; projects?: Record<string, HookSettings>; user?: HookSettings};
  signing_key?: string;
}

/**
 * What the agent-host hooks of one project (or of the user) run with: the tree, the scenario, the user's own opt-in,
 * limits.
 */
export interface HookSettings {
  knowledge: string;
  scenario: string;
  enabled?: boolean;
  max_bytes?: number;
  budget_ms?: number;
  /**
   * Written by hook install: per host, the parts of its hooks file that were there, empty, before (uninstall leaves
   * them).
   */
  found_empty?: Partial<Record<'claude-code' | 'codex', Array<'file' | 'hooks' | 'SessionStart' | 'UserPromptSubmit'>>>;
}

/**
 * The hook settings for a session in `dir`: the listed project folder that
 * is `dir` or its nearest ancestor, else the user-level settings, else none.
 */
export function hookSettingsFor(
  config: UserConfig,
  dir: string,
): {settings: HookSettings; project: string | null} | null {
  const projects = config.hooks?.projects ?? {};
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const found = projects[d];
    if (found) return {settings: found, project: d};
    if (path.dirname(d) === d) break;
  }
  return config.hooks?.user ? {settings: config.hooks.user, project: null} : null;
}

export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME)
      ? env.XDG_CONFIG_HOME
      : path.join(os.homedir(), '.config');
  return path.join(base, 'autoctx', 'config.json');
}

/**
 * The configuration's text as readUserConfig reads it (through a link), or null when it cannot be read (readUserConfig
 * says why).
 */
export function userConfigText(env: NodeJS.ProcessEnv = process.env): string | null {
  try {
    return fs.readFileSync(userConfigPath(env), 'utf8');
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return null;
  }
}

/** The user's settings ({schema_version: 1} without a file); a malformed file is CONFIG_INVALID naming it. */
export function readUserConfig(env: NodeJS.ProcessEnv = process.env): UserConfig {
  const file = userConfigPath(env);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {schema_version: 1};
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') notAFolder(file);
    if ((error as NodeJS.ErrnoException).code === 'EISDIR')
      fail('CONFIG_INVALID', `${file} is a folder, not a file`, {file});
    throw error;
  }
  let value: unknown;
  try {
    value = parseJsonUtf8(bytes);
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    fail('CONFIG_INVALID', `${file}: ${(error as Error).message}`, {file});
  }
  const problem = schemaProblem('user-config', value);
  if (problem) fail('CONFIG_INVALID', `${file}: ${problem}`, {file});
  return value as UserConfig;
}

/**
 * A file where a folder on the path to `file` should be (say ~/.config/autoctx linked to a file): CONFIG_INVALID naming
 * it.
 */
export function notAFolder(file: string): never {
  fail(
    'CONFIG_INVALID',
    `${file}: a part of its path that must be a folder is not one (a file, or a link to one); move it aside`,
    {file},
  );
}
