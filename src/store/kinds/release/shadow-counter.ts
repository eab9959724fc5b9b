import {createHash} from 'node:crypto';
import {canonicalJson} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {listDir} from '../../files/fs.js';
import type {StateArea} from '../../state-area.js';

/**
 * .state/shadow/<key>-<YYYY-MM-DD>.json: how many shadow runs a scenario and
 * scope have consumed on one UTC day, on this machine (the state area is per
 * machine, so the daily cap is too). Counted under the state area's lock, so
 * concurrent callers never pass the cap. Counters older than yesterday are
 * pruned.
 */
export const SHADOW_COUNTER_SCHEMA = 'shadow-counter' as const;

export interface ShadowCounter {
  schema_version: 1;
  scenario: string;
  scope: string;
  date: string;
  count: number;
}

const FILE = /^([0-9a-f]{32})-(\d{4}-\d{2}-\d{2})\.json$/;

function counterKey(scenario: string, scope: string): string {
  return createHash('sha256')
    .update(canonicalJson(['autoctx-shadow-counter-v1', scenario, scope]))
    .digest('hex')
    .slice(0, 32);
}

function counterFile(area: StateArea, scenario: string, scope: string, date: string): string {
  return area.file('shadow', `${counterKey(scenario, scope)}-${date}.json`);
}

export function readCounter(area: StateArea, scenario: string, scope: string, date: string): ShadowCounter | null {
  return area.readDocument<ShadowCounter>(counterFile(area, scenario, scope, date), SHADOW_COUNTER_SCHEMA, (v) => {
    const c = v as unknown as ShadowCounter;
    if (c.scenario !== scenario || c.scope !== scope || c.date !== date)
      fail(
        'DIGEST_MISMATCH',
        `counts for ${JSON.stringify([c.scenario, c.scope, c.date])}, not ${JSON.stringify([scenario, scope, date])}`,
      );
    return c;
  });
}

/** Under the state lock: write a day's counter. */
export function writeCounter(area: StateArea, c: ShadowCounter): void {
  area.writer.mkdir(area.file('shadow'));
  area.writer.replaceDocument(counterFile(area, c.scenario, c.scope, c.date), SHADOW_COUNTER_SCHEMA, c);
}

/** Under the state lock: remove every counter of a day before `keepFrom` (YYYY-MM-DD). Returns how many. */
export function pruneCounters(area: StateArea, keepFrom: string): number {
  let removed = 0;
  for (const e of listDir(area.guard, area.file('shadow'))) {
    const m = FILE.exec(e.name);
    if (!e.isFile() || !m || m[2]! >= keepFrom) continue;
    area.writer.remove(area.file('shadow', e.name));
    removed++;
  }
  return removed;
}
