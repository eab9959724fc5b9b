import type {Serving} from '../../../model/release/routing.js';
import fs from 'node:fs';
import {sha256Hex} from '../../../canonical/index.js';
import {fail, isSystemError, rethrowUnless, isAutoctxError} from '../../../errors.js';
import {isExpired} from '../../../model/delivery/bootstrap-receipt.js';
import {retentionScan} from './retention.js';
import type {StateArea} from '../../state-area.js';

/**
 * .state/hosts/<host>/<sha256(session_id)>.json: what one agent session's
 * hooks keep between its session start and its first prompt (the receipt to
 * dedup against) and the lifecycle generation of its events. Written under
 * the state lock; a file that is a link or readable by group or others is
 * refused; pruned with the receipts, 30 days after its last change.
 */
export const HOST_STATE_SCHEMA = 'host-state' as const;
export const HOSTS = ['claude-code', 'codex'] as const;
export type Host = (typeof HOSTS)[number];

export interface HostState {
  version: 1;
  scenario: string;
  receipt_id: string | null;
  generation: number;
  delivered_generation: number | null;
  last_event: {source: string; generation: number; at: string} | null;
  /** The bundle routing chose for this session at its first delivery: later hooks of the session render from it. */
  routing?: Serving;
  updated_at: string;
}

export function hostStateFile(area: StateArea, host: Host, sessionId: string): string {
  if (!(HOSTS as readonly string[]).includes(host)) fail('INVALID_INPUT', `not a host: ${JSON.stringify(host)}`);
  return area.file('hosts', host, `${sha256Hex(sessionId)}.json`);
}

/**
 * The session's state, or null; a link, a file others can read, or one of another scenario is refused (CONFIG_INVALID).
 */
export function readHostState(area: StateArea, host: Host, sessionId: string, scenario: string): HostState | null {
  const file = hostStateFile(area, host, sessionId);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return null;
  }
  const rel = area.guard.relative(file);
  if (!st.isFile()) fail('CONFIG_INVALID', `${rel} is not a regular file (a link is never followed)`, {file: rel});
  if ((st.mode & 0o077) !== 0)
    fail(
      'CONFIG_INVALID',
      `${rel} is readable or writable by group or others (mode ${(st.mode & 0o777).toString(8)})`,
      {file: rel},
    );
  const state = area.readDocument<HostState>(file, HOST_STATE_SCHEMA);
  if (state && state.scenario !== scenario) return null; // another scenario's session state: not this one's
  return state;
}

/** Under the state lock: write a session's state (0600, its folders 0700). */
export function writeHostState(area: StateArea, host: Host, sessionId: string, state: HostState): void {
  const file = hostStateFile(area, host, sessionId);
  area.writer.mkdir(area.file('hosts', host));
  area.writer.replaceDocument(file, HOST_STATE_SCHEMA, state);
}

/** Under the state lock: remove session states not changed for 30 days (judged as receipts are: retention.ts). */
export function pruneHostStates(area: StateArea, now: Date): number {
  let removed = 0;
  const read = (file: string) => area.readDocument<HostState>(file, HOST_STATE_SCHEMA);
  for (const host of HOSTS) {
    const scan = retentionScan(
      area,
      area.file('hosts', host),
      /^[0-9a-f]{64}\.json$/,
      (file) => read(file)?.updated_at ?? null,
      now,
    );
    for (const file of scan?.files ?? []) {
      let state: HostState | null = null;
      try {
        state = read(file);
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        continue;
      }
      if (state && isExpired({created_at: state.updated_at}, scan!.at)) {
        area.writer.remove(file);
        removed++;
      }
    }
  }
  return removed;
}
