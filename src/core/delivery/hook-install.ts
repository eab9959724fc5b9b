import path from 'node:path';
import {fail} from '../../errors.js';
import {isFile, readConfigText, removeConfigFile, writeConfigText} from '../../store/io/config-files.js';
import {changesPatch, gitignoreChange, type FileChange} from './hook-changes.js';
import {KnowledgeStore, userConfigPath, type HookSettings} from '../../store/index.js';
import {
  checkLocation,
  editHooks,
  EVENTS,
  hookFiles,
  isOurs,
  otherLayers,
  parseHooksFile,
  type HookHost,
  type HookLocation,
} from './hook-files.js';
import {configuredProjects, currentSettings, editUserConfig, settingsKey, withFoundEmpty} from './hook-settings.js';

export {
  HOOK_ENTRY,
  HOOK_TIMEOUT_SECONDS,
  hookCommand,
  hookFiles,
  SESSION_START_MATCHER,
  type HookHost,
  type HookLocation,
} from './hook-files.js';

export interface HookInstallResult {
  status: 'installed' | 'unchanged' | 'uninstalled' | 'planned';
  host: HookHost;
  file: string;
  changes: string[];
  settings: {config: string; key: string; enabled: boolean};
  notes: string[];
  /** With --dry-run: the unified diff of every file the command would write or remove. */
  diff?: string;
}

/**
 * Register autoctx's SessionStart and UserPromptSubmit hooks for one host in
 * one location, and its settings (tree, scenario; the opt-in left as it is,
 * off at first) in the per-user configuration. Refused when another layer
 * already registers it (two registrations inject twice). Running it again
 * changes nothing.
 */
export function hookInstall(options: {
  host: HookHost;
  location: HookLocation;
  knowledge: string;
  scenario: string;
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
}): HookInstallResult {
  const env = options.env ?? process.env;
  checkLocation(options.location);
  const knowledge = path.resolve(options.knowledge);
  KnowledgeStore.open(knowledge).resolveScenario(options.scenario);
  const {target, layers} = hookFiles(options.host, options.location, env);
  // A user-level registration would double every project that registers its own: those autoctx knows of are checked
  // too.
  const projects =
    'user' in options.location
      ? Object.keys(configuredProjects(env)).flatMap((project) => hookFiles(options.host, {project}, env).layers)
      : [];
  const twice = otherLayers(options.host, target, [...new Set([...layers, ...projects])]);
  if (twice.length > 0)
    fail(
      'INVALID_INPUT',
      `autoctx's ${options.host} hook is already registered in ${twice.join(' and ')}; a second ` +
        `registration would inject twice (autoctx hook uninstall there first)`,
    );
  const current = readConfigText(target);
  const hooks = editHooks(target, current, options.host, 'install');
  const existing = currentSettings(options.location, env);
  // What this install found empty (with what an earlier one found, while its entries are still there) is kept for
  // uninstall.
  const found =
    hooks.changed.length === 0
      ? undefined
      : [
          ...new Set([
            ...(hooks.hadOurs ? (existing?.found_empty?.[options.host] ?? []) : []),
            ...(current === null ? (['file'] as const) : []),
            ...hooks.foundEmpty,
          ]),
        ];
  const settings: HookSettings = withFoundEmpty(
    {...existing, knowledge, scenario: options.scenario, enabled: existing?.enabled === true},
    options.host,
    found,
  );
  const configFile = userConfigPath(env);
  const configText = editUserConfig(configFile, options.location, settings);
  const configBefore = readConfigText(configFile);
  const configChanged = configText !== configBefore;
  // Claude Code's project settings are each teammate's own (absolute paths): the project's .gitignore keeps them out.
  const ignore =
    options.host === 'claude-code' && 'project' in options.location ? gitignoreChange(options.location.project) : null;
  const notes = [
    `to undo: autoctx hook uninstall --host ${options.host} ` +
      `${'project' in options.location ? `--project ${options.location.project}` : '--user'}`,
  ];
  if (!settings.enabled)
    notes.push(
      `bootstrap injection is off until you turn it on: autoctx hook enable ` +
        `${'project' in options.location ? `--project ${options.location.project}` : '--user'}`,
    );
  if (options.host === 'codex')
    notes.push(
      'Codex runs a hook only once you trust it: start codex and review it with /hooks (autoctx never ' +
        'writes trust for you)',
    );
  const result = (status: HookInstallResult['status']): HookInstallResult => ({
    status,
    host: options.host,
    file: target,
    changes: [
      ...hooks.changed,
      ...(configChanged ? [`settings for ${settingsKey(options.location)} in ${configFile}`] : []),
      ...(ignore ? [`${path.basename(target)} ignored in ${ignore.file}`] : []),
    ],
    settings: {config: configFile, key: settingsKey(options.location), enabled: settings.enabled === true},
    notes,
    ...(options.dryRun
      ? {
          diff: changesPatch([
            ...(hooks.changed.length > 0 ? [{file: target, before: current, after: hooks.text}] : []),
            ...(configChanged ? [{file: configFile, before: configBefore, after: configText}] : []),
            ...(ignore ? [ignore] : []),
          ]),
        }
      : {}),
  });
  if (options.dryRun) return result('planned');
  if (hooks.changed.length === 0 && !configChanged && !ignore) return result('unchanged');
  if (hooks.changed.length > 0) writeConfigText(target, hooks.text);
  if (configChanged) writeConfigText(configFile, configText, {private: true});
  if (ignore) writeConfigText(ignore.file, ignore.after!);
  return result('installed');
}

/**
 * Take autoctx's hooks for one host out of one location: a hooks file install created goes once nothing else is in it,
 * and injection is turned off (unless the other host's hooks are still installed there); the tree and scenario stay
 * (hook install finds them again).
 */
export function hookUninstall(options: {
  host: HookHost;
  location: HookLocation;
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
}): HookInstallResult {
  const env = options.env ?? process.env;
  checkLocation(options.location);
  const {target} = hookFiles(options.host, options.location, env);
  const current = readConfigText(target);
  const existing = currentSettings(options.location, env);
  const keep = existing?.found_empty?.[options.host] ?? [];
  const hooks =
    current === null ? {text: '', changed: []} : editHooks(target, current, options.host, 'uninstall', keep);
  const removeTarget = hooks.changed.length > 0 && keep.includes('file') && hooks.text.replace(/\s/g, '') === '{}';
  // Once autoctx's entries are out, what install found empty is forgotten (the next install looks again), and
  // injection is off unless the other host's hooks still run here.
  const configFile = userConfigPath(env);
  const configBefore = readConfigText(configFile);
  const turnOff = existing?.enabled === true && !installedElsewhere(options.host, options.location, env);
  const configText =
    hooks.changed.length > 0 &&
    existing !== undefined &&
    (existing.found_empty?.[options.host] !== undefined || turnOff)
      ? editUserConfig(configFile, options.location, {
          ...withFoundEmpty(existing, options.host, []),
          ...(turnOff ? {enabled: false} : {}),
        })
      : null;
  const changes = [
    ...hooks.changed,
    ...(removeTarget ? [`removed ${target} (autoctx created it; nothing else is in it)`] : []),
    ...(configText !== null ? [`settings for ${settingsKey(options.location)} in ${configFile}`] : []),
    ...(turnOff && configText !== null ? ['bootstrap injection turned off'] : []),
  ];
  const enabled = existing?.enabled === true && !(turnOff && configText !== null);
  const fileChanges: FileChange[] = [
    ...(hooks.changed.length > 0 ? [{file: target, before: current, after: removeTarget ? null : hooks.text}] : []),
    ...(configText !== null ? [{file: configFile, before: configBefore, after: configText}] : []),
  ];
  const res: HookInstallResult = {
    status: hooks.changed.length === 0 ? 'unchanged' : options.dryRun ? 'planned' : 'uninstalled',
    host: options.host,
    file: target,
    changes,
    settings: {config: configFile, key: settingsKey(options.location), enabled},
    notes: [],
    ...(options.dryRun ? {diff: changesPatch(fileChanges)} : {}),
  };
  if (options.dryRun) return res;
  if (removeTarget) removeConfigFile(target);
  else if (hooks.changed.length > 0) writeConfigText(target, hooks.text);
  if (configText !== null) writeConfigText(configFile, configText, {private: true});
  return res;
}

/** Whether the other host's autoctx hooks are registered in this location (its settings serve both). */
function installedElsewhere(host: HookHost, location: HookLocation, env: NodeJS.ProcessEnv): boolean {
  const other: HookHost = host === 'claude-code' ? 'codex' : 'claude-code';
  return [...new Set(hookFiles(other, location, env).layers)].some((file) => {
    const text = readConfigText(file);
    if (text === null) return false;
    const {hooks} = parseHooksFile(file, text);
    return EVENTS.some(([event, verb]) =>
      (hooks[event] ?? []).some((g) => Array.isArray(g?.hooks) && g.hooks.some((h) => isOurs(h, other, verb))),
    );
  });
}

/** Turn bootstrap injection on or off for a location: the user's own opt-in, never the repository's. */
export function hookEnable(options: {location: HookLocation; enabled: boolean; env?: NodeJS.ProcessEnv}): {
  status: 'updated' | 'unchanged';
  key: string;
  enabled: boolean;
  config: string;
} {
  const env = options.env ?? process.env;
  checkLocation(options.location);
  const existing = currentSettings(options.location, env);
  const key = settingsKey(options.location);
  if (!existing) fail('INVALID_INPUT', `no hook settings for ${key}; run autoctx hook install first`);
  const config = userConfigPath(env);
  if ((existing.enabled === true) === options.enabled)
    return {status: 'unchanged', key, enabled: options.enabled, config};
  writeConfigText(config, editUserConfig(config, options.location, {...existing, enabled: options.enabled}), {
    private: true,
  });
  return {status: 'updated', key, enabled: options.enabled, config};
}

export interface HookStatusEntry {
  host: HookHost;
  file: string;
  event: string;
  command: string;
  /** The command's node and entry point still exist (a Node upgrade can break an absolute path). */
  runs: boolean;
}

/** Every installed autoctx hook in a location's layers, whether each still runs, and whether injection is on. */
export function hookStatus(options: {location: HookLocation; env?: NodeJS.ProcessEnv}): {
  status: 'ok';
  hooks: HookStatusEntry[];
  settings: HookSettings | null;
  enabled: boolean;
} {
  const env = options.env ?? process.env;
  checkLocation(options.location);
  const out: HookStatusEntry[] = [];
  for (const host of ['claude-code', 'codex'] as const) {
    for (const file of new Set(hookFiles(host, options.location, env).layers)) {
      const text = readConfigText(file);
      if (text === null) continue;
      const {hooks} = parseHooksFile(file, text);
      for (const [event, verb] of EVENTS) {
        for (const g of hooks[event] ?? []) {
          for (const h of Array.isArray(g?.hooks) ? g.hooks : []) {
            if (!isOurs(h, host, verb)) continue;
            const paths = [...(h.command as string).matchAll(/'((?:[^']|'\\'')*)'/g)].map((m) =>
              m[1]!.replaceAll("'\\''", "'"),
            );
            out.push({
              host,
              file,
              event,
              command: h.command as string,
              runs: paths.length >= 2 && paths.slice(0, 2).every(isFile),
            });
          }
        }
      }
    }
  }
  const settings = currentSettings(options.location, env) ?? null;
  return {status: 'ok', hooks: out, settings, enabled: settings?.enabled === true};
}
