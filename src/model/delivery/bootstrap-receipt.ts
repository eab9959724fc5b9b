import type {Serving} from '../release/routing.js';
import {randomBytes} from 'node:crypto';
import {canonicalJson, sha256Hex} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {maxBytesProblem, type PackageItem} from './bootstrap-render.js';

/** The eligibility profile, and the schema of prepare's answer (autoctx's own names). */
export const BOOTSTRAP_PROFILE = 'autoctx.scenario-bootstrap.v1';
export const BOOTSTRAP_PACKAGE_SCHEMA = 'autoctx.bootstrap-package.v1';
export const BOOTSTRAP_LIFECYCLES = ['startup', 'resume', 'clear', 'compact', 'restore', 'fork'] as const;
export type BootstrapLifecycle = (typeof BOOTSTRAP_LIFECYCLES)[number];
export type ReceiptState = 'pending' | 'injected' | 'failed' | 'skipped';
export type PackageStatus = 'ready' | 'empty' | 'skipped';
export type PackageReason = null | 'disabled' | 'no_eligible_context' | 'already_delivered' | 'preparation_failed';
/** Receipts are pruned once older than this (B.10). */
export const RECEIPT_RETENTION_DAYS = 30;

/** What shapes a package: the fields its fingerprint covers, with the event and the opt-in. */
export interface BootstrapRequest {
  scenario: string;
  enabled: boolean;
  lifecycle: BootstrapLifecycle;
  integration: string;
  event_id: string | null;
  max_bytes: number;
  handoff: {id: string; revision: number} | null;
}

/**
 * A delivery receipt, in the state area: identity metadata, exact
 * citations, sizes, times and state, and nothing else (no content, no
 * query, no raw host identifier, no host error text).
 */
export interface BootstrapReceipt {
  schema_version: 1;
  receipt_id: string;
  scenario: string;
  /** SHA-256 of scenario, integration, lifecycle and event id; null without an event id. */
  event_key: string | null;
  request_digest: string;
  integration: string;
  lifecycle: BootstrapLifecycle;
  profile: typeof BOOTSTRAP_PROFILE;
  state: ReceiptState;
  reason: PackageReason;
  max_bytes: number;
  package_digest: string | null;
  content_bytes: number;
  truncated: boolean;
  items: PackageItem[];
  /** The bundle each participating scenario served when the package was built: a retry rebuilds from exactly these. */
  sources: Array<{scenario: string; bundle_digest: string}>;
  /** The bundle routing chose for the session, which the package was built from (receipts before routing have none). */
  routing?: Serving;
  created_at: string;
  updated_at: string;
}

const RECEIPT_ID = /^bcr_[0-9a-f]{32}$/;

export function isReceiptId(text: string): boolean {
  return RECEIPT_ID.test(text);
}

export function assertReceiptId(text: string): void {
  if (!isReceiptId(text))
    fail(
      'INVALID_INPUT',
      `not a receipt id: ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)} (a receipt ` +
        `id is "bcr_" and 32 lowercase hex digits)`,
    );
}

/** An integration's name (claude-code, codex, my-host.v2): never a path, a space or a control character. */
const INTEGRATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Problems with a request's own fields, as one line, or null (B.1). */
export function requestProblem(r: {
  integration: string;
  lifecycle: string;
  event_id: string | null;
  max_bytes: number;
}): string | null {
  if (!INTEGRATION_NAME.test(r.integration) || r.integration.includes('..'))
    return (
      `--integration must be a name: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or ` +
      `digit, no "..", got ${JSON.stringify(r.integration.slice(0, 80))}`
    );
  if (!(BOOTSTRAP_LIFECYCLES as readonly string[]).includes(r.lifecycle))
    return `--lifecycle must be one of ${BOOTSTRAP_LIFECYCLES.join(', ')}`;
  if (r.event_id !== null && !/^[\x20-\x7e]{1,512}$/.test(r.event_id))
    return '--event-id must be 1 to 512 printable ASCII characters';
  return maxBytesProblem(r.max_bytes);
}

/** The event's key (B.5): the raw id is never stored. */
export function eventKey(scenario: string, integration: string, lifecycle: string, eventId: string): string {
  return sha256Hex(`${scenario}\0${integration}\0${lifecycle}\0${eventId}`);
}

/** The fingerprint of what shapes the package (B.6): reusing an event with another one is refused. */
export function requestDigest(r: BootstrapRequest): string {
  return sha256Hex(
    canonicalJson({
      handoff: r.handoff,
      integration: r.integration,
      lifecycle: r.lifecycle,
      max_bytes: r.max_bytes,
      profile: BOOTSTRAP_PROFILE,
    }),
  );
}

/**
 * The receipt of a keyed event has an id derived from its key, so one event has one receipt file; others are random.
 */
export function receiptIdFor(key: string | null): string {
  if (key === null) return `bcr_${randomBytes(16).toString('hex')}`;
  return `bcr_${sha256Hex(`autoctx:bootstrap-receipt:v1\0${key}`).slice(0, 32)}`;
}

export function isExpired(receipt: {created_at: string}, now: Date): boolean {
  return Date.parse(receipt.created_at) < now.getTime() - RECEIPT_RETENTION_DAYS * 86_400_000;
}
