import {recall} from '../core/delivery/recall.js';
import {render} from '../core/delivery/bootstrap.js';
import type {HookSettings} from '../store/index.js';
import {
  hookOutputLine,
  recallCounts,
  type HookEvent,
  type HookInput,
  type HookOutcome,
  type HookRun,
} from './host-io.js';

/**
 * A pinned session's delivery: the package (SessionStart) or recall on the prompt (UserPromptSubmit) from exactly the
 * pinned bundle, the same rendering, framing and output line as any session, with no routing, no receipt, no session
 * state and no sealed evidence (an evaluation session is no delivery to keep). The first prompt leaves out what the
 * session start delivered whole, as a receipt would have it. A bundle the tree does not hold prints nothing.
 */
export function pinnedDelivery(
  run: HookRun,
  event: HookEvent,
  input: HookInput,
  settings: HookSettings,
  bundle: string,
): HookOutcome {
  if (!settings.enabled) return {outcome: 'disabled'};
  const common = {knowledge: settings.knowledge, scenario: settings.scenario, maxBytes: settings.max_bytes, bundle};
  const start = render(common);
  if (event === 'SessionStart') {
    const counts = {items: start.items.length, content_bytes: start.content_bytes, truncated: start.truncated};
    if (start.content === null) return {outcome: 'empty', ...counts};
    const line = hookOutputLine('SessionStart', start.content);
    if (line === null || run.expired()) return {outcome: line === null ? 'invalid_package' : 'timeout', ...counts};
    run.write(line);
    return {outcome: 'injected', ...counts};
  }
  if (input.prompt!.trim() === '') return {outcome: 'empty'};
  const result = recall({...common, query: input.prompt!.slice(0, 8192), delivered: start.items});
  const counts = recallCounts(result);
  if (result.status !== 'ready') return {outcome: result.status, ...counts};
  const line = hookOutputLine('UserPromptSubmit', result.content!);
  if (line === null || run.expired()) return {outcome: line === null ? 'invalid_package' : 'timeout', ...counts};
  run.write(line);
  return {outcome: 'recalled', ...counts};
}
