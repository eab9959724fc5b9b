import {recall} from '../core/recall.js';
import {isoTimestamp} from '../model/records.js';
import {readHostState, writeHostState} from '../store/kinds/host-state.js';
import type {HookSettings, StateArea} from '../store/index.js';
import {hookOutputLine, type HookInput} from './host-io.js';
import type {HookOutcome, HookRun} from './run.js';

/** How long the first prompt waits for a session start still delivering (within the hook's budget). */
export const PENDING_WAIT_MS = 600;

/**
 * UserPromptSubmit: ordinary recall with the prompt as the query and the
 * session's saved receipt as the exact-revision dedup hint, then the receipt
 * is consumed (the second prompt sends none). A session start that has not
 * finished is waited for briefly, then recall goes on without dedup.
 */
export async function userPromptSubmit(run: HookRun, input: HookInput, settings: HookSettings, area: StateArea): Promise<HookOutcome> {
  if (!settings.enabled) return {outcome: 'disabled'};
  if (input.prompt!.trim() === '') return {outcome: 'empty'};
  const {host} = run;
  let state = readHostState(area, host, input.session_id, settings.scenario);
  // The session start may still be running (interactive Codex runs the two at once): wait a little for its receipt.
  const waitUntil = Math.min(Date.now() + PENDING_WAIT_MS, run.deadline - 200);
  while (Date.now() < waitUntil && state?.last_event && state.delivered_generation !== state.last_event.generation && state.receipt_id === null && pendingStart(state.last_event.at, run)) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    state = readHostState(area, host, input.session_id, settings.scenario);
  }
  const receipt = state?.receipt_id ?? undefined;
  if (receipt !== undefined) {
    await area.withLock(run.secondsLeft(), () => {
      const now = readHostState(area, host, input.session_id, settings.scenario);
      if (now && now.receipt_id === receipt) writeHostState(area, host, input.session_id, {...now, receipt_id: null, updated_at: isoTimestamp(run.now())});
    });
  }
  const query = input.prompt!.slice(0, 8192);
  const result = recall({knowledge: settings.knowledge, scenario: settings.scenario, query, receipt, maxBytes: settings.max_bytes});
  const counts = {items: result.items.length, content_bytes: result.content_bytes, truncated: result.truncated, deduplicated: result.deduplicated};
  if (result.status !== 'ready') return {outcome: result.status, ...counts};
  const line = hookOutputLine('UserPromptSubmit', result.content!);
  if (line === null) return {outcome: 'invalid_package', ...counts};
  run.write(line);
  return {outcome: 'recalled', ...counts};
}

/** A session start began within the last few seconds and has not saved a receipt: it may still deliver. */
function pendingStart(startedAt: string, run: HookRun): boolean {
  return run.now().getTime() - Date.parse(startedAt) < 5_000;
}
