import {BOOTSTRAP_LIMITS} from '../model/delivery/bootstrap-render.js';
import type {Host} from '../store/kinds/delivery/host-state.js';
import {isJsonParseError, rethrowUnless} from '../errors.js';

/** One hook run: its host, clock, budget and the single write of its output. */
export interface HookRun {
  host: Host;
  now: () => Date;
  deadline: number;
  secondsLeft(): number;
  expired(): boolean;
  write(line: string): void;
}

/** What a run ends with: an outcome code and counts, never content, identifiers or paths. */
export interface HookOutcome {
  outcome: string;
  items?: number;
  content_bytes?: number;
  truncated?: boolean;
  deduplicated?: number;
}

/**
 * The event id prepare gets: the lifecycle identity (host, session, source, generation), hashed again into the event
 * key.
 */
export function eventId(host: Host, sessionId: string, source: string, generation: number): string {
  return `autoctx-hook:${host}:${Buffer.from(sessionId, 'utf8').toString('hex').slice(0, 400)}:${source}:${generation}`;
}

/**
 * What the two hosts send a hook on stdin, and the one output both accept
 * (agent-hosts-and-release-anchors.md §1.3, §1.4): exactly
 * {"hookSpecificOutput":{"hookEventName":E,"additionalContext":C}} on one
 * line, nothing else; anything else is "nothing to inject", and prints nothing.
 */
export type HookEvent = 'SessionStart' | 'UserPromptSubmit';

/** The lifecycle sources each host sends (Codex never sends fork or restore). */
export const HOST_SOURCES: Record<Host, readonly string[]> = {
  'claude-code': ['startup', 'resume', 'clear', 'compact', 'fork'],
  codex: ['startup', 'resume', 'clear', 'compact'],
};

/** Both hosts cut or divert a context over 10,000 characters; autoctx stays at or under 8,192 bytes. */
const HOST_CHARACTER_CAP = 10_000;
/** A hook's stdin is small; more than this is not a host's. */
export const STDIN_LIMIT = 1_048_576;

export interface HookInput {
  session_id: string;
  cwd: string;
  source: string | null;
  prompt: string | null;
}

export class HookInputError extends Error {}

/** The fields a hook uses, checked; anything else the host sends is ignored (and never stored). */
export function parseHookInput(text: string, host: Host, event: HookEvent): HookInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    throw new HookInputError('stdin is not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new HookInputError('stdin is not a JSON object');
  const v = value as Record<string, unknown>;
  if (v.hook_event_name !== event) throw new HookInputError('hook_event_name is not the event this hook serves');
  if (typeof v.session_id !== 'string' || v.session_id.trim() === '' || v.session_id.length > 512)
    throw new HookInputError('session_id is missing or too long');
  // An identifier, never text to show or store: a control character is bad input from the host, not a setting to fix.
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(v.session_id))
    throw new HookInputError('session_id holds a control character');
  if (typeof v.cwd !== 'string' || !v.cwd.startsWith('/')) throw new HookInputError('cwd is missing or not absolute');
  let source: string | null = null;
  let prompt: string | null = null;
  if (event === 'SessionStart') {
    if (typeof v.source !== 'string' || !HOST_SOURCES[host].includes(v.source))
      throw new HookInputError('source is not a lifecycle this host sends');
    source = v.source;
  } else {
    if (typeof v.prompt !== 'string') throw new HookInputError('prompt is missing');
    prompt = v.prompt;
  }
  return {session_id: v.session_id.trim(), cwd: v.cwd, source, prompt};
}

/**
 * The exact line to print, or null when it would not be accepted whole by
 * both hosts (then nothing is printed): one JSON object of exactly that
 * shape, the context non-blank, within 8,192 bytes and 10,000 characters.
 */
export function hookOutputLine(event: HookEvent, context: string): string | null {
  if (
    context.trim() === '' ||
    Buffer.byteLength(context, 'utf8') > BOOTSTRAP_LIMITS.maxBytes ||
    context.length > HOST_CHARACTER_CAP
  )
    return null;
  const line = JSON.stringify({hookSpecificOutput: {hookEventName: event, additionalContext: context}});
  // Read back as a host would: exactly one object, exactly these keys, the context unchanged.
  const back = JSON.parse(line) as {hookSpecificOutput?: {hookEventName?: unknown; additionalContext?: unknown}};
  const keys = Object.keys(back);
  const inner = back.hookSpecificOutput ?? {};
  if (
    keys.length !== 1 ||
    keys[0] !== 'hookSpecificOutput' ||
    Object.keys(inner).join(',') !== 'hookEventName,additionalContext'
  )
    return null;
  if (inner.hookEventName !== event || inner.additionalContext !== context || line.includes('\n')) return null;
  return `${line}\n`;
}

/**
 * The user a session runs for, when the environment says ($AUTOCTX_USER): routing's requester before the session id.
 */
export function hookUser(): string | undefined {
  const u = process.env.AUTOCTX_USER;
  return u !== undefined && u !== '' && u.length <= 512 && !/[\u0000-\u001f\u007f]/.test(u) ? u : undefined;
}

/** What a recall delivered, as a hook's outcome counts it (never its content). */
export function recallCounts(result: {
  items: readonly unknown[];
  content_bytes: number;
  truncated: boolean;
  deduplicated: number;
}): {items: number; content_bytes: number; truncated: boolean; deduplicated: number} {
  return {
    items: result.items.length,
    content_bytes: result.content_bytes,
    truncated: result.truncated,
    deduplicated: result.deduplicated,
  };
}
