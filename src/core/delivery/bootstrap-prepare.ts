import {jsonEqual} from '../../canonical/index.js';
import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../errors.js';
import {
  BOOTSTRAP_LIMITS,
  renderPackage,
  type PackageCandidate,
  type RenderedPackage,
} from '../../model/delivery/bootstrap-render.js';
import {
  BOOTSTRAP_PROFILE,
  eventKey,
  receiptIdFor,
  requestDigest,
  requestProblem,
  type BootstrapLifecycle,
  type BootstrapReceipt,
  type BootstrapRequest,
  type PackageReason,
  type PackageStatus,
  type ReceiptState,
} from '../../model/delivery/bootstrap-receipt.js';
import {parseHandoffRef} from '../../model/delivery/curation.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import type {KnowledgeStore, StateArea} from '../../store/index.js';
import {pruneReceipts, readReceipt, writeReceipt} from '../../store/kinds/delivery/bootstrap-receipt.js';
import {pruneHostStates} from '../../store/kinds/delivery/host-state.js';
import {housekeepingDue, recordHousekeeping} from '../../store/kinds/common/housekeeping.js';
import {
  componentCandidate,
  handoffCandidate,
  participants,
  selectCandidates,
  type Participant,
  type ReferenceCounts,
} from './bootstrap-select.js';
import {NO_REFERENCES, packageFields, type RenderOptions, type RenderResult} from './bootstrap-render.js';
import {lockTimeout, now, openKnowledge} from '../common/store-options.js';
import {checkRequest, servingFor} from '../release/route.js';
import type {Serving} from '../../model/release/routing.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';

export interface PrepareOptions extends RenderOptions {
  integration: string;
  lifecycle: string;
  enabled?: boolean | undefined;
  eventId?: string | undefined;
  /**
   * The host's session already holds this lifecycle's package (a resume of a
   * session given it): the event is recorded skipped, already_delivered,
   * without reading references. For hooks; not a command-line flag.
   */
  alreadyHeld?: boolean | undefined;
}

export interface PrepareResult extends Omit<RenderResult, 'status'> {
  status: PackageStatus;
  reason: PackageReason;
  receipt: {receipt_id: string; state: ReceiptState; stored: boolean};
}

/** Validate a prepare's flags into a request (before anything is read, locked or pruned). */
function requestOf(options: PrepareOptions, scenario: string): BootstrapRequest {
  if (options.enabled !== undefined && typeof options.enabled !== 'boolean')
    fail('USAGE', 'enabled must be true or false');
  const request: BootstrapRequest = {
    scenario,
    enabled: options.enabled === true,
    lifecycle: options.lifecycle as BootstrapLifecycle,
    integration: options.integration,
    event_id: options.eventId ?? null,
    max_bytes: options.maxBytes ?? BOOTSTRAP_LIMITS.defaultBytes,
    handoff: options.handoff !== undefined ? parseHandoffRef(options.handoff) : null,
  };
  const problem = requestProblem(request);
  if (problem) fail('USAGE', problem);
  return request;
}

/** Rebuild a pending receipt's package from exactly what it cites; null when anything differs. */
function rebuild(
  knowledge: KnowledgeStore,
  list: readonly Participant[],
  receipt: BootstrapReceipt,
): RenderedPackage | null {
  const granted = new Map(list.map((p) => [p.scenario, p]));
  const candidates: PackageCandidate[] = [];
  for (const item of receipt.items) {
    const p = granted.get(item.scenario);
    if (!p) return null; // a reference no longer granted: not delivered
    if (item.kind === 'handoff') {
      if (item.scenario !== receipt.scenario || item.handoff_id === null || item.revision === null) return null;
      try {
        candidates.push(handoffCandidate(p.store, p.curation, {id: item.handoff_id, revision: item.revision}));
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        return null; // the revision cannot be read back: not delivered
      }
      continue;
    }
    const source = receipt.sources.find((s) => s.scenario === item.scenario);
    const bundle = source ? readBundle(knowledge.scenario(item.scenario), source.bundle_digest) : null;
    const component = bundle?.components.find((c) => c.digest === item.component_digest);
    if (!component) return null;
    candidates.push(componentCandidate(item.scenario, component));
  }
  const again = renderPackage(candidates, {maxBytes: receipt.max_bytes});
  const same =
    again.content_bytes === receipt.content_bytes &&
    again.package_digest === receipt.package_digest &&
    jsonEqual(again.items, receipt.items);
  return same ? again : null;
}

function receiptOf(
  request: BootstrapRequest,
  key: string | null,
  at: string,
  fields: Pick<BootstrapReceipt, 'state' | 'reason'> & Partial<BootstrapReceipt>,
): BootstrapReceipt {
  return {
    schema_version: 1,
    receipt_id: receiptIdFor(key),
    scenario: request.scenario,
    event_key: key,
    request_digest: requestDigest(request),
    integration: request.integration,
    lifecycle: request.lifecycle,
    profile: BOOTSTRAP_PROFILE,
    max_bytes: request.max_bytes,
    package_digest: null,
    content_bytes: 0,
    truncated: false,
    items: [],
    sources: [],
    created_at: at,
    updated_at: at,
    ...fields,
  };
}

function answer(
  request: BootstrapRequest,
  status: PackageStatus,
  reason: PackageReason,
  receipt: BootstrapReceipt,
  stored: boolean,
  rendered: RenderedPackage | null,
  references: ReferenceCounts,
  routing: Serving | null = null,
): PrepareResult {
  const empty: RenderedPackage = {
    content: null,
    content_bytes: 0,
    package_digest: null,
    items: [],
    truncated: false,
    omitted: 0,
  };
  const fields = packageFields(
    request.scenario,
    status === 'ready'
      ? rendered!
      : {
          ...empty,
          truncated: status === 'empty' ? (rendered?.truncated ?? false) : false,
          omitted: status === 'empty' ? (rendered?.omitted ?? 0) : 0,
        },
    references,
    routing,
  );
  return {...fields, status, reason, receipt: {receipt_id: receipt.receipt_id, state: receipt.state, stored}};
}

/**
 * Render and record a delivery receipt (B.4): disabled requests are
 * skipped without reading references; a keyed event's retry returns the
 * same package and receipt while pending (after checking authorization
 * again), skipped after a terminal outcome, and is refused when what shapes
 * the package differs. Under the state area's lock, so N concurrent
 * prepares of one event meet one receipt.
 */
export async function prepare(options: PrepareOptions): Promise<PrepareResult> {
  const who = checkRequest({user: options.user, session: options.session});
  const knowledge = openKnowledge(options);
  const scenario = knowledge.resolveScenario(options.scenario);
  const request = requestOf(options, scenario);
  const key =
    request.event_id !== null ? eventKey(scenario, request.integration, request.lifecycle, request.event_id) : null;
  const area = knowledge.state();
  const at = () => isoTimestamp(now(options));
  // Refused before anything is locked, pruned or written: the same event with another request.
  if (key !== null && request.enabled) assertSameRequest(readReceipt(area, receiptIdFor(key)), request);
  const run = (fn: () => PrepareResult) =>
    request.enabled || key !== null ? area.withLock(lockTimeout(options), fn) : Promise.resolve(fn());
  return run(() => {
    // At most once a day (.state/housekeeping.json): a prune stats every receipt and session state.
    if (area.locked && housekeepingDue(area, 'pruned_at', now(options))) {
      pruneReceipts(area, now(options));
      pruneHostStates(area, now(options));
      recordHousekeeping(area, 'pruned_at', now(options));
    }
    const existing = key !== null ? readReceipt(area, receiptIdFor(key)) : null;
    if (!request.enabled) return disabled(area, request, key, existing, at);
    if (options.alreadyHeld === true && !existing) {
      const receipt = receiptOf(request, key, at(), {state: 'skipped', reason: 'already_delivered'});
      if (key !== null) writeReceipt(area, receipt);
      return answer(request, 'skipped', 'already_delivered', receipt, key !== null, null, NO_REFERENCES);
    }
    if (existing) return retry(knowledge, area, request, existing, at);
    const routing = servingFor(knowledge.scenario(scenario), {...who, pinned: options.pinned});
    const {participants: list, references} = participants(knowledge, scenario, routing.bundle_digest);
    const rendered = renderPackage(selectCandidates(list, request.handoff), {maxBytes: request.max_bytes});
    if (rendered.content === null) {
      const receipt = receiptOf(request, key, at(), {
        state: 'skipped',
        reason: 'no_eligible_context',
        truncated: rendered.truncated,
        routing,
      });
      if (key !== null) writeReceipt(area, receipt);
      return answer(request, 'empty', 'no_eligible_context', receipt, key !== null, rendered, references, routing);
    }
    const cited = new Set(rendered.items.map((i) => i.scenario));
    const receipt = receiptOf(request, key, at(), {
      state: 'pending',
      reason: null,
      package_digest: rendered.package_digest,
      content_bytes: rendered.content_bytes,
      truncated: rendered.truncated,
      items: rendered.items,
      sources: list
        .filter((p) => cited.has(p.scenario))
        .map((p) => ({scenario: p.scenario, bundle_digest: p.bundle_digest})),
      routing,
    });
    writeReceipt(area, receipt);
    return answer(request, 'ready', null, receipt, true, rendered, references, routing);
  });
}

function disabled(
  area: StateArea,
  request: BootstrapRequest,
  key: string | null,
  existing: BootstrapReceipt | null,
  at: () => string,
): PrepareResult {
  if (existing) {
    const receipt =
      existing.state === 'pending'
        ? {...existing, state: 'skipped' as const, reason: 'disabled' as const, updated_at: at()}
        : existing;
    if (receipt !== existing) writeReceipt(area, receipt);
    return answer(
      request,
      'skipped',
      receipt.state === 'skipped' ? 'disabled' : 'already_delivered',
      receipt,
      true,
      null,
      NO_REFERENCES,
    );
  }
  const receipt = receiptOf(request, key, at(), {state: 'skipped', reason: 'disabled'});
  if (key !== null) writeReceipt(area, receipt);
  return answer(request, 'skipped', 'disabled', receipt, key !== null, null, NO_REFERENCES);
}

function assertSameRequest(existing: BootstrapReceipt | null, request: BootstrapRequest): void {
  if (existing && existing.request_digest !== requestDigest(request)) {
    fail(
      'BOOTSTRAP_REQUEST_MISMATCH',
      'this event was prepared with another byte limit, lifecycle, integration or handoff; a stable event ' +
        'id names one request',
    );
  }
}

function retry(
  knowledge: KnowledgeStore,
  area: StateArea,
  request: BootstrapRequest,
  existing: BootstrapReceipt,
  at: () => string,
): PrepareResult {
  assertSameRequest(existing, request);
  // The retry of an event renders from the bundle its receipt was built from: one event, one bundle.
  const pinned = existing.routing ?? null;
  const routing = pinned && readBundle(knowledge.scenario(request.scenario), pinned.bundle_digest) ? pinned : null;
  const {participants: list, references} = participants(knowledge, request.scenario, routing?.bundle_digest);
  if (existing.state !== 'pending')
    return answer(request, 'skipped', 'already_delivered', existing, true, null, references, routing);
  const rendered = rebuild(knowledge, list, existing);
  if (!rendered) {
    const failed = {...existing, state: 'failed' as const, reason: 'preparation_failed' as const, updated_at: at()};
    writeReceipt(area, failed);
    return answer(request, 'skipped', 'preparation_failed', failed, true, null, references);
  }
  return answer(
    request,
    'ready',
    null,
    existing,
    true,
    {...rendered, truncated: existing.truncated},
    references,
    routing,
  );
}
