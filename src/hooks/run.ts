import {environmentError, isAutoctxError, isSystemError, rethrowUnless} from '../errors.js';
import {hookSettingsFor, KnowledgeStore, readUserConfig} from '../store/index.js';
import {HOSTS, type Host} from '../store/kinds/delivery/host-state.js';
import {
  HookInputError,
  parseHookInput,
  STDIN_LIMIT,
  type HookEvent,
  type HookOutcome,
  type HookRun,
} from './host-io.js';
import {sessionStart} from './session-start.js';
import {pinnedDelivery} from './pinned.js';
import {pinnedBundle} from '../model/delivery/hook-pin.js';
import {userPromptSubmit} from './user-prompt-submit.js';

/** The whole run's wall-clock budget by default, always below the installed timeout of 5 s. */
export const DEFAULT_BUDGET_MS = 2000;
export const INSTALLED_TIMEOUT_S = 5;

export interface HookIo {
  stdin: string;
  env: NodeJS.ProcessEnv;
  now?: () => Date;
  write: (text: string) => void;
}

export type {HookOutcome, HookRun} from './host-io.js';

const EVENTS: Record<string, HookEvent> = {'session-start': 'SessionStart', 'user-prompt-submit': 'UserPromptSubmit'};

/** Parse `session-start|user-prompt-submit --host claude-code|codex`; null when it is not that. */
export function parseHookArgs(argv: readonly string[]): {event: HookEvent; host: Host} | null {
  const event = EVENTS[argv[0] ?? ''];
  const rest = argv.slice(1);
  const at = rest.indexOf('--host');
  const host = at >= 0 ? rest[at + 1] : rest.find((a) => a.startsWith('--host='))?.slice(7);
  const known = rest.length === (at >= 0 ? 2 : 1);
  if (!event || !known || !(HOSTS as readonly string[]).includes(host ?? '')) return null;
  return {event, host: host as Host};
}

/**
 * Run one hook: never throws, never prints more than its one line on
 * stdout, and returns the diagnostic to write on stderr (null: nothing to
 * say). The caller exits 0 whatever happens.
 */
export async function runHook(argv: readonly string[], io: HookIo): Promise<HookOutcome & {event: string}> {
  const started = Date.now();
  const args = parseHookArgs(argv);
  if (!args) return {event: 'unknown', outcome: 'invalid_arguments'};
  let wrote = false;
  const run = (budgetMs: number): HookRun => ({
    host: args.host,
    now: io.now ?? (() => new Date()),
    deadline: started + budgetMs,
    secondsLeft() {
      return Math.max(0, (this.deadline - Date.now()) / 1000);
    },
    expired() {
      return Date.now() >= this.deadline;
    },
    write(line: string) {
      if (wrote) return;
      wrote = true;
      io.write(line);
    },
  });
  const event = args.event === 'SessionStart' ? 'session_start' : 'user_prompt_submit';
  // biome-ignore lint/plugin: the hook's boundary: the host gets an outcome whatever happened
  try {
    if (Buffer.byteLength(io.stdin, 'utf8') > STDIN_LIMIT) return {event, outcome: 'invalid_input'};
    const input = parseHookInput(io.stdin, args.host, args.event);
    let found;
    try {
      // The project: Claude Code names it; otherwise the session's folder (the nearest listed ancestor).
      found = hookSettingsFor(
        readUserConfig(io.env),
        (args.host === 'claude-code' && io.env.CLAUDE_PROJECT_DIR) || input.cwd,
      );
    } catch (error) {
      rethrowUnless(error, isAutoctxError, isSystemError);
      return {event, outcome: environmentError(error) ? outcomeOfError(error) : 'invalid_config'};
    }
    if (!found) return {event, outcome: 'not_configured'};
    const {settings} = found;
    const budget = Math.min(settings.budget_ms ?? DEFAULT_BUDGET_MS, INSTALLED_TIMEOUT_S * 1000 - 500);
    if (!settings.knowledge.startsWith('/')) return {event, outcome: 'invalid_config'};
    const pin = pinnedBundle(io.env);
    if (pin === null) return {event, outcome: 'invalid_pin'};
    if (pin !== undefined) return {event, ...pinnedDelivery(run(budget), args.event, input, settings, pin)};
    const area = KnowledgeStore.open(settings.knowledge).state();
    const r = run(budget);
    const outcome =
      args.event === 'SessionStart'
        ? await sessionStart(r, input, settings, area)
        : await userPromptSubmit(r, input, settings, area);
    return {event, ...outcome};
  } catch (error) {
    return {event, outcome: outcomeOfError(error)};
  }
}

/**
 * The outcome a failed run reports: bad host input, the environment refusing (permission_denied, no_space,
 * read_only_fs, too_many_open_files: what a person can fix on the machine), a typed error's group, else internal.
 */
export function outcomeOfError(error: unknown): string {
  if (error instanceof HookInputError) return 'invalid_input';
  const environment = environmentError(error);
  if (environment) return environment.code.toLowerCase();
  if (isAutoctxError(error)) return outcomeOf(error.code);
  return 'internal';
}

function outcomeOf(code: string): string {
  if (code === 'PERMISSION_DENIED' || code === 'NO_SPACE' || code === 'READ_ONLY_FS' || code === 'TOO_MANY_OPEN_FILES')
    return code.toLowerCase();
  if (code === 'LOCKED' || code === 'LOCK_LOST') return 'locked';
  if (
    code === 'KNOWLEDGE_NOT_FOUND' ||
    code === 'SCENARIO_NOT_FOUND' ||
    code === 'NOT_INITIALIZED' ||
    code === 'INVALID_NAME'
  )
    return 'tree_unavailable';
  if (
    code === 'CORRUPT_FILE' ||
    code === 'INTEGRITY' ||
    code === 'IMMUTABLE_CONFLICT' ||
    code === 'UNSAFE_PATH' ||
    code === 'UNSIGNED_POINTER_MOVE' ||
    code === 'LINE_ENDINGS' ||
    code === 'MERGE_CONFLICT' ||
    code === 'DIVERGED'
  )
    return 'tree_broken';
  if (code === 'CONFIG_INVALID' || code === 'USAGE' || code === 'INVALID_INPUT' || code === 'HANDOFF_NOT_FOUND')
    return 'invalid_config';
  return 'failed';
}
