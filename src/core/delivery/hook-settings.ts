/** autoctx's hook settings in the per-user configuration: read as the hook reads them, edited byte for byte. */
import type * as jsoncModule from 'jsonc-parser';
import {fail} from '../../errors.js';
import {jsonc, setPath} from './json-text-edit.js';
import {readConfigText} from '../../store/io/config-files.js';
import {readUserConfig, userConfigPath, userConfigText, type HookSettings} from '../../store/index.js';
import {checkEditable, type FoundEmpty, type HookHost, type HookLocation} from './hook-files.js';

/**
 * Settings with one host's found-empty parts set (`parts` undefined: as they are; empty: none), the field left out when
 * no host has any.
 */
export function withFoundEmpty(
  settings: HookSettings,
  host: HookHost,
  parts: readonly string[] | undefined,
): HookSettings {
  if (parts === undefined) return settings;
  const {found_empty: before, ...rest} = settings;
  const order: FoundEmpty[] = ['file', 'hooks', 'SessionStart', 'UserPromptSubmit'];
  const mine = order.filter((p) => parts.includes(p));
  const found: NonNullable<HookSettings['found_empty']> = {...before, [host]: mine};
  if (mine.length === 0) delete found[host];
  return Object.keys(found).length > 0 ? {...rest, found_empty: found} : rest;
}

export function settingsKey(location: HookLocation): string {
  return 'project' in location ? location.project : '(user)';
}

/** The user configuration's text with one location's hook settings set (or removed), the rest kept byte for byte. */
export function editUserConfig(file: string, location: HookLocation, value: HookSettings | undefined): string {
  const current = readConfigText(file);
  let text = current ?? '{\n  "schema_version": 1\n}\n';
  checkEditable(file, text);
  const errors: jsoncModule.ParseError[] = [];
  const parsed = jsonc.parse(text, errors);
  if (errors.length > 0 || parsed === null || typeof parsed !== 'object')
    fail('CONFIG_INVALID', `${file} cannot be parsed as a JSON object; autoctx does not touch a file it cannot read`, {
      file,
    });
  const at = 'project' in location ? ['hooks', 'projects', location.project] : ['hooks', 'user'];
  text = value === undefined ? text : setPath(text, at, value);
  return text.endsWith('\n') ? text : `${text}\n`;
}

/**
 * The user configuration as the hook reads it, once its text is one autoctx may edit (no key twice: the hook reads the
 * last copy, an edit would change the first).
 */
function editableUserConfig(env: NodeJS.ProcessEnv) {
  const file = userConfigPath(env);
  const text = userConfigText(env);
  if (text !== null) checkEditable(file, text);
  return readUserConfig(env);
}

/**
 * The hook settings in the user configuration, read and schema-checked as the hook reads them (CONFIG_INVALID
 * otherwise).
 */
export function configuredProjects(env: NodeJS.ProcessEnv): Record<string, HookSettings> {
  return editableUserConfig(env).hooks?.projects ?? {};
}

export function currentSettings(location: HookLocation, env: NodeJS.ProcessEnv): HookSettings | undefined {
  const hooks = editableUserConfig(env).hooks;
  return 'project' in location ? hooks?.projects?.[location.project] : hooks?.user;
}
