/** The hosts' hook files: where each host reads hooks, and the edits of autoctx's entries in them. */
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import type * as jsoncModule from 'jsonc-parser';
import {fail} from '../../errors.js';
import {appendElement, jsonc, removeElement, removeMember, replaceElement, setMember} from './json-text-edit.js';
import {jsonTextProblem} from './json-text-check.js';
import {readConfigText} from '../../store/io/config-files.js';

export type HookHost = 'claude-code' | 'codex';
export type HookLocation = {project: string} | {user: true};

/** The installed timeout; the hook's own budget (2 s by default) stays below it. */
export const HOOK_TIMEOUT_SECONDS = 5;
export const SESSION_START_MATCHER = 'startup|resume|clear|compact|fork';
export const EVENTS = [
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

export function checkLocation(location: HookLocation): void {
  if ('project' in location && !path.isAbsolute(location.project))
    fail('USAGE', '--project must be an absolute folder');
}

export interface Handler {
  type?: unknown;
  command?: unknown;
}
export interface Group {
  matcher?: unknown;
  hooks?: Handler[];
}

/**
 * A hand-kept JSON file autoctx may edit: refused (CONFIG_INVALID, naming it) when its readers could disagree on it or
 * a parser could not finish it.
 */
export function checkEditable(file: string, text: string): void {
  const problem = jsonTextProblem(text);
  if (problem !== null)
    fail('CONFIG_INVALID', `${file}: ${problem}; autoctx leaves such a file alone (fix it or move it aside)`, {file});
}

export function parseHooksFile(
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
      `${file} cannot be parsed as a JSON object; autoctx does not touch a file it cannot read (fix it or ` +
        `move it aside)`,
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

/**
 * The parts of a hooks file install fills that are there and empty: `"hooks": {}`, an event's `[]`; "file": no file at
 * all (uninstall removes the file it created once nothing else is in it).
 */
export type FoundEmpty = 'file' | 'hooks' | 'SessionStart' | 'UserPromptSubmit';
function emptyParts(parsed: {hooks: Record<string, Group[]>; present: boolean}): FoundEmpty[] {
  const parts: FoundEmpty[] = parsed.present && Object.keys(parsed.hooks).length === 0 ? ['hooks'] : [];
  for (const [event] of EVENTS) if (parsed.hooks[event]?.length === 0) parts.push(event);
  return parts;
}

/** Whether a handler is autoctx's hook for this host and verb (any installation of it). */
export function isOurs(h: Handler, host: HookHost, verb: string): boolean {
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
export function editHooks(
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
export function otherLayers(host: HookHost, target: string, layers: string[]): string[] {
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
