import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import type * as jsoncModule from 'jsonc-parser';
import {fail} from '../../errors.js';
import {
  appendElement,
  jsonc,
  removeElement,
  removeMember,
  replaceElement,
  setMember,
  setPath,
} from './json-text-edit.js';
import {jsonTextProblem} from './json-text-check.js';
import {isFile, readConfigText, writeConfigText} from '../../store/io/config-files.js';
import {KnowledgeStore, readUserConfig, userConfigPath, userConfigText, type HookSettings} from '../../store/index.js';

export type HookHost = 'claude-code' | 'codex';
export type HookLocation = {project: string} | {user: true};

/** The installed timeout; the hook's own budget (2 s by default) stays below it. */
export const HOOK_TIMEOUT_SECONDS = 5;
export const SESSION_START_MATCHER = 'startup|resume|clear|compact|fork';
const EVENTS = [
  ['SessionStart', 'session-start'],
  ['UserPromptSubmit', 'user-prompt-submit'],
] as const;
/** The hook entry point of this installation: an absolute path, never npx. */
const HERE = path.dirname(fileURLToPath(import.meta.url));
/**
 * The package root: above dist/bundle (the bundled CLI), or above core/delivery (the compiled modules, or the sources).
 */
const PACKAGE_ROOT =
  path.basename(HERE) === 'bundle' && path.basename(path.dirname(HERE)) === 'dist'
    ? path.resolve(HERE, '../..')
    : path.resolve(HERE, '../../..');
export const HOOK_ENTRY = path.join(PACKAGE_ROOT, 'bin', 'autoctx-hook.js');

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * The stable command: absolute node and entry point, no settings (a changed setting never changes it, so Codex's trust
 * holds).
 */
export function hookCommand(host: HookHost, verb: string, node = process.execPath, entry = HOOK_ENTRY): string {
  return `${quote(node)} ${quote(entry)} ${verb} --host ${host}`;
}

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
}

/** Where the host reads hooks for a location: the file autoctx writes, and every layer it must not be in twice. */
export function hookFiles(
  host: HookHost,
  location: HookLocation,
  env: NodeJS.ProcessEnv = process.env,
): {target: string; layers: string[]} {
  if (host === 'claude-code') {
    const user = path.join(home(env), '.claude', 'settings.json');
    if ('user' in location) return {target: user, layers: [user]};
    const dir = location.project;
    // settings.local.json: not committed, because the absolute paths differ per teammate.
    return {
      target: path.join(dir, '.claude', 'settings.local.json'),
      layers: [path.join(dir, '.claude', 'settings.json'), path.join(dir, '.claude', 'settings.local.json'), user],
    };
  }
  const codexHome = env.CODEX_HOME && path.isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : path.join(home(env), '.codex');
  const user = path.join(codexHome, 'hooks.json');
  if ('user' in location) return {target: user, layers: [user]};
  return {
    target: path.join(location.project, '.codex', 'hooks.json'),
    layers: [path.join(location.project, '.codex', 'hooks.json'), user],
  };
}

interface Handler {
  type?: unknown;
  command?: unknown;
}
interface Group {
  matcher?: unknown;
  hooks?: Handler[];
}

/**
 * A hand-kept JSON file autoctx may edit: refused (CONFIG_INVALID, naming it) when its readers could disagree on it or
 * a parser could not finish it.
 */
function checkEditable(file: string, text: string): void {
  const problem = jsonTextProblem(text);
  if (problem !== null)
    fail('CONFIG_INVALID', `${file}: ${problem}; autoctx leaves such a file alone (fix it or move it aside)`, {file});
}

function parseHooksFile(
  file: string,
  text: string | null,
): {text: string; hooks: Record<string, Group[]>; present: boolean} {
  if (text === null) return {text: '{}\n', hooks: {}, present: false};
  checkEditable(file, text);
  const errors: jsoncModule.ParseError[] = [];
  const value = jsonc.parse(text, errors, {allowTrailingComma: false, disallowComments: false});
  if (errors.length > 0 || value === null || typeof value !== 'object' || Array.isArray(value))
    fail(
      'CONFIG_INVALID',
      `${file} cannot be parsed as a JSON object; autoctx does not touch a file it cannot read (fix it or move it aside)`,
      {file},
    );
  const present = (value as {hooks?: unknown}).hooks !== undefined;
  const hooks = (value as {hooks?: unknown}).hooks ?? {};
  if (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks))
    fail('CONFIG_INVALID', `${file}: "hooks" is not an object`, {file});
  for (const [event, groups] of Object.entries(hooks))
    if (!Array.isArray(groups)) fail('CONFIG_INVALID', `${file}: hooks.${event} is not a list`, {file});
  return {text, hooks: hooks as Record<string, Group[]>, present};
}

/** The parts of a hooks file install fills that are there and empty: `"hooks": {}`, an event's `[]`. */
type FoundEmpty = 'hooks' | 'SessionStart' | 'UserPromptSubmit';
function emptyParts(parsed: {hooks: Record<string, Group[]>; present: boolean}): FoundEmpty[] {
  const parts: FoundEmpty[] = parsed.present && Object.keys(parsed.hooks).length === 0 ? ['hooks'] : [];
  for (const [event] of EVENTS) if (parsed.hooks[event]?.length === 0) parts.push(event);
  return parts;
}

/** Whether a handler is autoctx's hook for this host and verb (any installation of it). */
function isOurs(h: Handler, host: HookHost, verb: string): boolean {
  return (
    typeof h.command === 'string' &&
    h.command.includes('autoctx-hook.js') &&
    h.command.includes(` ${verb} --host ${host}`)
  );
}

function desiredGroup(event: string, host: HookHost, verb: string): Group {
  const handler = {type: 'command', command: hookCommand(host, verb), timeout: HOOK_TIMEOUT_SECONDS};
  return event === 'SessionStart' ? {matcher: SESSION_START_MATCHER, hooks: [handler]} : {hooks: [handler]};
}

/**
 * The text of the hooks file with autoctx's two entries merged in (or taken out), everything else byte for byte.
 * Install says which parts it found empty and whether any entry of autoctx's was there already; uninstall takes out
 * an event's list or "hooks" that autoctx's entries leave empty, except those `keep` names (found empty by install):
 * install then uninstall gives the file's bytes back.
 */
function editHooks(
  file: string,
  current: string | null,
  host: HookHost,
  mode: 'install' | 'uninstall',
  keep: readonly string[] = [],
): {text: string; changed: string[]; foundEmpty: FoundEmpty[]; hadOurs: boolean} {
  const parsed = parseHooksFile(file, current);
  let {text, hooks} = parsed;
  const foundEmpty = emptyParts(parsed);
  let hadOurs = false;
  const changed: string[] = [];
  for (const [event, verb] of EVENTS) {
    const groups = hooks[event] ?? [];
    const at = groups.findIndex((g) => Array.isArray(g?.hooks) && g.hooks.some((h) => isOurs(h, host, verb)));
    if (at >= 0) hadOurs = true;
    if (mode === 'install') {
      const want = desiredGroup(event, host, verb);
      if (at >= 0 && JSON.stringify(groups[at]) === JSON.stringify(want)) continue;
      text = at >= 0 ? replaceElement(text, ['hooks', event], at, want) : appendElement(text, ['hooks', event], want);
      changed.push(`${at >= 0 ? 'updated' : 'added'} ${event}`);
    } else if (at >= 0) {
      const group = groups[at]!;
      const rest = (group.hooks ?? []).filter((h) => !isOurs(h, host, verb));
      text =
        rest.length === 0
          ? removeElement(text, ['hooks', event], at)
          : setMember(text, ['hooks', event, at], 'hooks', rest);
      // A list (and a hooks object) that held only autoctx's entries goes with them, unless it was there, empty,
      // before.
      if (rest.length === 0 && groups.length === 1 && !keep.includes(event))
        text = removeMember(text, ['hooks'], event);
      if (Object.keys(parseHooksFile(file, text).hooks).length === 0 && !keep.includes('hooks'))
        text = removeMember(text, [], 'hooks');
      changed.push(`removed ${event}`);
    }
    hooks = parseHooksFile(file, text).hooks;
  }
  // A file without a final newline keeps it so: uninstall gives the bytes back.
  return {text, changed, foundEmpty, hadOurs};
}

/** The layer files other than the target that already register autoctx's hook for this host. */
function otherLayers(host: HookHost, target: string, layers: string[]): string[] {
  return layers
    .filter((f) => f !== target)
    .filter((f) => {
      const text = readConfigText(f);
      if (text === null) return false;
      const {hooks} = parseHooksFile(f, text);
      return EVENTS.some(([event, verb]) =>
        (hooks[event] ?? []).some((g) => Array.isArray(g?.hooks) && g.hooks.some((h) => isOurs(h, host, verb))),
      );
    });
}

export interface HookInstallResult {
  status: 'installed' | 'unchanged' | 'uninstalled' | 'planned';
  host: HookHost;
  file: string;
  changes: string[];
  settings: {config: string; key: string; enabled: boolean};
  notes: string[];
}

/**
 * Settings with one host's found-empty parts set (`parts` undefined: as they are; empty: none), the field left out when
 * no host has any.
 */
function withFoundEmpty(settings: HookSettings, host: HookHost, parts: readonly string[] | undefined): HookSettings {
  if (parts === undefined) return settings;
  const {found_empty: before, ...rest} = settings;
  const order: FoundEmpty[] = ['hooks', 'SessionStart', 'UserPromptSubmit'];
  const mine = order.filter((p) => parts.includes(p));
  const found: NonNullable<HookSettings['found_empty']> = {...before, [host]: mine};
  if (mine.length === 0) delete found[host];
  return Object.keys(found).length > 0 ? {...rest, found_empty: found} : rest;
}

function settingsKey(location: HookLocation): string {
  return 'project' in location ? location.project : '(user)';
}

/** The user configuration's text with one location's hook settings set (or removed), the rest kept byte for byte. */
function editUserConfig(file: string, location: HookLocation, value: HookSettings | undefined): string {
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
function configuredProjects(env: NodeJS.ProcessEnv): Record<string, HookSettings> {
  return editableUserConfig(env).hooks?.projects ?? {};
}

function currentSettings(location: HookLocation, env: NodeJS.ProcessEnv): HookSettings | undefined {
  const hooks = editableUserConfig(env).hooks;
  return 'project' in location ? hooks?.projects?.[location.project] : hooks?.user;
}

function checkLocation(location: HookLocation): void {
  if ('project' in location && !path.isAbsolute(location.project))
    fail('USAGE', '--project must be an absolute folder');
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
      `autoctx's ${options.host} hook is already registered in ${twice.join(' and ')}; a second registration would inject twice (autoctx hook uninstall there first)`,
    );
  const current = readConfigText(target);
  const hooks = editHooks(target, current, options.host, 'install');
  const existing = currentSettings(options.location, env);
  // What this install found empty (with what an earlier one found, while its entries are still there) is kept for
  // uninstall.
  const found =
    hooks.changed.length === 0
      ? undefined
      : [...new Set([...(hooks.hadOurs ? (existing?.found_empty?.[options.host] ?? []) : []), ...hooks.foundEmpty])];
  const settings: HookSettings = withFoundEmpty(
    {...existing, knowledge, scenario: options.scenario, enabled: existing?.enabled === true},
    options.host,
    found,
  );
  const configFile = userConfigPath(env);
  const configText = editUserConfig(configFile, options.location, settings);
  const configChanged = configText !== readConfigText(configFile);
  const notes = [
    `to undo: autoctx hook uninstall --host ${options.host} ${'project' in options.location ? `--project ${options.location.project}` : '--user'}`,
  ];
  if (!settings.enabled)
    notes.push(
      `bootstrap injection is off until you turn it on: autoctx hook enable ${'project' in options.location ? `--project ${options.location.project}` : '--user'}`,
    );
  if (options.host === 'codex')
    notes.push(
      'Codex runs a hook only once you trust it: start codex and review it with /hooks (autoctx never writes trust for you)',
    );
  const result = (status: HookInstallResult['status']): HookInstallResult => ({
    status,
    host: options.host,
    file: target,
    changes: [
      ...hooks.changed,
      ...(configChanged ? [`settings for ${settingsKey(options.location)} in ${configFile}`] : []),
    ],
    settings: {config: configFile, key: settingsKey(options.location), enabled: settings.enabled === true},
    notes,
  });
  if (options.dryRun) return result('planned');
  if (hooks.changed.length === 0 && !configChanged) return result('unchanged');
  if (hooks.changed.length > 0) writeConfigText(target, hooks.text);
  if (configChanged) writeConfigText(configFile, configText, {private: true});
  return result('installed');
}

/** Take autoctx's hooks for one host out of one location; the settings stay (hook install finds them again). */
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
  // Once autoctx's entries are out, what install found empty is forgotten: the next install looks again.
  const configFile = userConfigPath(env);
  const configText =
    hooks.changed.length > 0 && existing?.found_empty?.[options.host] !== undefined
      ? editUserConfig(configFile, options.location, withFoundEmpty(existing, options.host, []))
      : null;
  const changes = [
    ...hooks.changed,
    ...(configText !== null ? [`settings for ${settingsKey(options.location)} in ${configFile}`] : []),
  ];
  const res: HookInstallResult = {
    status: hooks.changed.length === 0 ? 'unchanged' : options.dryRun ? 'planned' : 'uninstalled',
    host: options.host,
    file: target,
    changes,
    settings: {config: configFile, key: settingsKey(options.location), enabled: existing?.enabled === true},
    notes: [],
  };
  if (!options.dryRun && hooks.changed.length > 0) writeConfigText(target, hooks.text);
  if (!options.dryRun && configText !== null) writeConfigText(configFile, configText, {private: true});
  return res;
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
