import {createHash} from 'node:crypto';
import {isAutoctxError, isSystemError, rethrowUnless} from '../errors.js';
import {sealDelivery} from '../core/inspection/evidence.js';
import {KnowledgeStore} from '../store/index.js';
import {recall} from '../core/delivery/recall.js';
import {isoTimestamp} from '../model/promotion/records.js';
import {readHostState, writeHostState} from '../store/kinds/delivery/host-state.js';
import type {HookSettings, StateArea} from '../store/index.js';
import {
  eventId,
  hookOutputLine,
  recallCounts,
  hookUser,
  type HookInput,
  type HookOutcome,
  type HookRun,
} from './host-io.js';
import {eventKey, receiptIdFor} from '../model/delivery/bootstrap-receipt.js';
import {readReceipt} from '../store/kinds/delivery/bootstrap-receipt.js';
import {requireActive} from '../store/kinds/promotion/active-pointer.js';

/** How long the first prompt waits for a session start still delivering (within the hook's budget). */
export const PENDING_WAIT_MS = 600;

/**
 * UserPromptSubmit: ordinary recall with the prompt as the query and the
 * session's saved receipt as the exact-revision dedup hint, then the receipt
 * is consumed (the second prompt sends none). A session start that has not
 * finished is waited for briefly, then recall goes on without dedup.
 */
export async function userPromptSubmit(
  run: HookRun,
  input: HookInput,
  settings: HookSettings,
  area: StateArea,
): Promise<HookOutcome> {
  if (!settings.enabled) return {outcome: 'disabled'};
  if (input.prompt!.trim() === '') return {outcome: 'empty'};
  const {host} = run;
  let state = readHostState(area, host, input.session_id, settings.scenario);
  // The session start may still be running (interactive Codex runs the two at once): wait a little for its receipt.
  const waitUntil = Math.min(Date.now() + PENDING_WAIT_MS, run.deadline - 200);
  while (
    Date.now() < waitUntil &&
    state?.last_event &&
    state.delivered_generation !== state.last_event.generation &&
    state.receipt_id === null &&
    startPending(area, run, input, settings, state.last_event)
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    state = readHostState(area, host, input.session_id, settings.scenario);
  }
  const receipt = state?.receipt_id ?? undefined;
  if (receipt !== undefined) {
    await area.withLock(run.secondsLeft(), () => {
      const now = readHostState(area, host, input.session_id, settings.scenario);
      if (now && now.receipt_id === receipt)
        writeHostState(area, host, input.session_id, {...now, receipt_id: null, updated_at: isoTimestamp(run.now())});
    });
  }
  const query = input.prompt!.slice(0, 8192);
  // The session's pinned bundle (its first delivery's): a canary change or rollback mid-session does not split it.
  const result = recall({
    knowledge: settings.knowledge,
    scenario: settings.scenario,
    query,
    receipt,
    maxBytes: settings.max_bytes,
    user: hookUser(),
    session: input.session_id,
    pinned: state?.routing ?? null,
  });
  const counts = recallCounts(result);
  if (result.status !== 'ready') return {outcome: result.status, ...counts};
  const line = hookOutputLine('UserPromptSubmit', result.content!);
  if (line === null) return {outcome: 'invalid_package', ...counts};
  run.write(line);
  // The recalled context's evidence: it has no receipt, so its correlation id derives from the delivery (never the raw
  // session id).
  try {
    await area.withLock(run.secondsLeft(), () => {
      const at = run.now();
      const correlation = `recall-${createHash('sha256')
        .update(JSON.stringify([host, input.session_id, result.package_digest, at.toISOString()]))
        .digest('hex')
        .slice(0, 32)}`;
      sealDelivery(KnowledgeStore.open(settings.knowledge), area, {
        scenario: settings.scenario,
        content: result.content!,
        receipt: {
          receipt_id: correlation,
          state: 'recalled',
          package_digest: result.package_digest,
          items: result.items,
        },
        bundleDigest:
          result.routing?.bundle_digest ??
          requireActive(KnowledgeStore.open(settings.knowledge).scenario(settings.scenario)).bundle_digest,
        version: result.routing?.version ?? null,
        at,
      });
    });
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    return {outcome: 'recalled_not_sealed', ...counts};
  }
  return {outcome: 'recalled', ...counts};
}

/**
 * Whether the session start of the last event may still deliver: it began
 * within the last few seconds, and its receipt is missing (prepare not yet
 * reached) or pending (not yet claimed). A skipped, failed or injected
 * receipt means it is done: nothing to wait for.
 */
function startPending(
  area: StateArea,
  run: HookRun,
  input: HookInput,
  settings: HookSettings,
  last: {source: string; generation: number; at: string},
): boolean {
  if (run.now().getTime() - Date.parse(last.at) >= 5_000) return false;
  const id = receiptIdFor(
    eventKey(
      settings.scenario,
      run.host,
      last.source,
      eventId(run.host, input.session_id, last.source, last.generation),
    ),
  );
  try {
    const receipt = readReceipt(area, id);
    return receipt === null || receipt.state === 'pending';
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    return false;
  }
}
