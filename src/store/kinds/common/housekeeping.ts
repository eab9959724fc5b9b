import {isAutoctxError, rethrowUnless} from '../../../errors.js';
import {isoTimestamp} from '../../../model/promotion/records.js';
import type {JsonValue} from '../../../canonical/index.js';
import type {LockedWriter} from '../../files/locked-writer.js';
import type {SchemaName} from '../../schemas.js';

/**
 * .state/housekeeping.json: when this machine last swept the state area for
 * a killed writer's temporary files, and last pruned delivery receipts and
 * session states. Both read every entry of folders that grow with sessions
 * and sealed evidence, so each runs at most once a day, not in every hook
 * (a hook is a new process each time). The file only ever delays a task: one
 * that is missing, unreadable, not valid, or dated after `now` (a clock set
 * back) makes both due. Nothing else depends on it: a temporary file is never
 * read (readers open files by their exact names), and a receipt past its
 * retention is not used, pruned or not.
 */
export const HOUSEKEEPING_SCHEMA = 'housekeeping' as const;
export const HOUSEKEEPING_INTERVAL_MS = 86_400_000;

export type HousekeepingTask = 'swept_at' | 'pruned_at';

export interface Housekeeping {
  schema_version: 1;
  swept_at?: string;
  pruned_at?: string;
}

/**
 * The state area as housekeeping uses it (the state area satisfies it; named here so that this kind imports nothing
 * that imports it).
 */
export interface HousekeptArea {
  readonly writer: LockedWriter;
  file(...segments: string[]): string;
  readDocument<T>(file: string, schema: SchemaName, check?: (value: JsonValue) => T): T | null;
}

const fileOf = (area: HousekeptArea) => area.file('housekeeping.json');

function read(area: HousekeptArea): Housekeeping | null {
  try {
    return area.readDocument<Housekeeping>(fileOf(area), HOUSEKEEPING_SCHEMA);
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    return null;
  }
}

/** Whether a task is due at `now`: not done within the interval before it. */
export function housekeepingDue(area: HousekeptArea, task: HousekeepingTask, now: Date): boolean {
  const done = read(area)?.[task];
  const at = done === undefined ? NaN : Date.parse(done);
  return !(at <= now.getTime() && now.getTime() - at < HOUSEKEEPING_INTERVAL_MS);
}

/** Under the state lock: record a task done at `now` (the other task's time is kept). */
export function recordHousekeeping(area: HousekeptArea, task: HousekeepingTask, now: Date): void {
  area.writer.replaceDocument(fileOf(area), HOUSEKEEPING_SCHEMA, {
    ...(read(area) ?? {}),
    schema_version: 1,
    [task]: isoTimestamp(now),
  });
}
