import {sealDelivery} from '../core/inspection/evidence.js';
import {KnowledgeStore} from '../store/index.js';
import {claim, prepare} from '../core/delivery/bootstrap.js';
import {isAutoctxError, isSystemError, rethrowUnless} from '../errors.js';
import {isoTimestamp} from '../model/promotion/records.js';
import {readHostState, writeHostState, type Host, type HostState} from '../store/kinds/delivery/host-state.js';
import type {HookSettings, StateArea} from '../store/index.js';
import {eventId, hookOutputLine, hookUser, type HookInput, type HookOutcome, type HookRun} from './host-io.js';
import {requireActive} from '../store/kinds/promotion/active-pointer.js';

/** Sources that begin a new lifecycle generation; resume and fork continue the current one. */
const NEW_GENERATION = new Set(['startup', 'clear', 'compact']);
/** A second run with the same session and source this soon after the first is the same event (a retry). */
export const RETRY_WINDOW_MS = 10_000;

/**
 * SessionStart: prepare the package for the lifecycle in `source`, check
 * the exact line both hosts accept, claim the receipt, print the line in one
 * write, then save the receipt for the first prompt. Anything that goes
 * wrong prints nothing (claiming `failed` where a receipt exists) and is
 * one content-free diagnostic.
 */
export async function sessionStart(
  run: HookRun,
  input: HookInput,
  settings: HookSettings,
  area: StateArea,
): Promise<HookOutcome> {
  const {host} = run;
  const source = input.source!;
  const scenario = settings.scenario;
  const now = run.now();
  if (!settings.enabled) {
    // Off: nothing is written, but an event of this session still pending is skipped (the opt-in revoked), reading no
    // reference.
    const last = readHostState(area, host, input.session_id, scenario)?.last_event;
    if (last)
      await prepare({
        knowledge: settings.knowledge,
        scenario,
        integration: host,
        lifecycle: last.source,
        enabled: false,
        eventId: eventId(host, input.session_id, last.source, last.generation),
        lockTimeout: run.secondsLeft(),
      });
    return {outcome: 'disabled'};
  }
  // 1. The lifecycle identity, under the state lock: a new generation for startup, clear, compact (not for a retry).
  const identity = await area.withLock(run.secondsLeft(), () => {
    const state = readHostState(area, host, input.session_id, scenario);
    const last = state?.last_event ?? null;
    const retry = last !== null && last.source === source && now.getTime() - Date.parse(last.at) < RETRY_WINDOW_MS;
    const generation = retry ? last.generation : (state?.generation ?? 0) + (NEW_GENERATION.has(source) ? 1 : 0);
    const next: HostState = {
      version: 1,
      scenario,
      // A stale receipt is cleared before a new lifecycle's package is established; a retry keeps it.
      receipt_id: retry ? (state?.receipt_id ?? null) : null,
      generation,
      delivered_generation: state?.delivered_generation ?? null,
      last_event: retry ? last : {source, generation, at: isoTimestamp(now)},
      ...(state?.routing ? {routing: state.routing} : {}),
      updated_at: isoTimestamp(now),
    };
    writeHostState(area, host, input.session_id, next);
    return {generation, held: !NEW_GENERATION.has(source) && next.delivered_generation === generation, state: next};
  });
  const result = await prepare({
    knowledge: settings.knowledge,
    scenario,
    integration: host,
    lifecycle: source,
    enabled: true,
    eventId: eventId(host, input.session_id, source, identity.generation),
    maxBytes: settings.max_bytes,
    alreadyHeld: identity.held,
    // Routing for the session (the user if known, else the session id), pinned to the bundle its first delivery used.
    user: hookUser(),
    session: input.session_id,
    pinned: identity.state.routing ?? null,
    lockTimeout: run.secondsLeft(),
  });
  const counts = {items: result.items.length, content_bytes: result.content_bytes, truncated: result.truncated};
  if (result.status !== 'ready')
    return {outcome: result.status === 'empty' ? 'empty' : (result.reason ?? 'skipped'), ...counts};
  const receipt = result.receipt.receipt_id;
  const line = hookOutputLine('SessionStart', result.content!);
  if (line === null || run.expired()) {
    await claimFailed(run, settings, receipt);
    return {outcome: line === null ? 'invalid_package' : 'timeout', ...counts};
  }
  try {
    await claim({
      knowledge: settings.knowledge,
      scenario,
      receipt,
      outcome: 'injected',
      lockTimeout: run.secondsLeft(),
    });
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    return {outcome: 'claim_failed', ...counts};
  }
  run.write(line);
  // After the line: the receipt for the first prompt's dedup (a kill here loses only the dedup).
  try {
    await area.withLock(run.secondsLeft(), () => {
      const state = readHostState(area, host, input.session_id, scenario) ?? identity.state;
      writeHostState(area, host, input.session_id, {
        ...state,
        receipt_id: receipt,
        delivered_generation: identity.generation,
        ...(result.routing ? {routing: result.routing} : {}),
        updated_at: isoTimestamp(run.now()),
      });
      // The delivery's evidence, under the same rules as autoctx evidence seal: the exact context injected and its
      // receipt.
      sealDelivery(KnowledgeStore.open(settings.knowledge), area, {
        scenario,
        content: result.content!,
        receipt: {receipt_id: receipt, state: 'injected', package_digest: result.package_digest, items: result.items},
        bundleDigest: result.routing?.bundle_digest ?? activeDigestOf(settings),
        version: result.routing?.version ?? null,
        at: run.now(),
      });
    });
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    return {outcome: 'injected_state_not_saved', ...counts};
  }
  return {outcome: 'injected', ...counts};
}

/** A receipt that will not be delivered is claimed failed, if it still can be. */
async function claimFailed(run: HookRun, settings: HookSettings, receipt: string): Promise<void> {
  try {
    await claim({
      knowledge: settings.knowledge,
      scenario: settings.scenario,
      receipt,
      outcome: 'failed',
      lockTimeout: Math.min(run.secondsLeft(), 0.5),
    });
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    // Already terminal, or the lock not had: nothing more to do within the budget.
  }
}

/** The bundle a delivery without routing came from: the one active.json names. */
function activeDigestOf(settings: HookSettings): string {
  return requireActive(KnowledgeStore.open(settings.knowledge).scenario(settings.scenario)).bundle_digest;
}
