import {fail} from '../../errors.js';
import {DEFAULT_SHADOW, isRunnable, normalizeScope, versionKey} from '../../model/release/release.js';
import {shadowBucket, SHADOW_ALGORITHM} from '../../model/release/routing.js';
import {pruneCounters, readCounter, writeCounter} from '../../store/kinds/release/shadow-counter.js';
import {lockTimeout, now, openKnowledge, type StoreOptions} from '../common/store-options.js';
import {scopeView, stateIn} from './registry-view.js';
import {rejectionOf} from './serving.js';

export interface ShadowOptions extends StoreOptions {
  event: string;
  scope?: string | undefined;
  consume?: boolean | undefined;
}

export interface ShadowResult {
  status: 'sampled' | 'not_sampled';
  algorithm: typeof SHADOW_ALGORITHM;
  scenario: string;
  scope: string;
  reason: 'sampled' | 'no_shadow' | 'outside_sample' | 'daily_cap';
  version: string | null;
  bundle_digest: string | null;
  bucket: number | null;
  basis_points: number;
  consumed: boolean;
  /** Shadow runs consumed today (UTC) on this machine, this one included. */
  count: number;
  daily_cap: number;
  date: string;
  /** SHADOW releases passed over because this deployment cannot run them. */
  skipped: string[];
}

const utcDay = (d: Date) => d.toISOString().slice(0, 10);

/**
 * `autoctx shadow sample`: whether an event is in the shadow run of the
 * scope's SHADOW release, by a stable hash of its id below the release's
 * sample share (default 0: off). With --consume, a sampled event takes one of
 * the day's runs (UTC), counted under the state area's lock: past the cap it
 * is not sampled. A SHADOW release this deployment cannot run is skipped.
 */
export async function shadowSample(options: ShadowOptions): Promise<ShadowResult> {
  const event = options.event;
  if (
    typeof event !== 'string' ||
    event === '' ||
    event.length > 512 ||
    /[\u0000-\u001f\u007f]/.test(event) ||
    !event.isWellFormed()
  )
    fail('USAGE', '--event must be one line of 1 to 512 characters');
  const scope = normalizeScope(options.scope);
  lockTimeout(options);
  const knowledge = openKnowledge(options);
  const store = knowledge.scenario(knowledge.resolveScenario(options.scenario));
  const view = scopeView(store, scope);
  const date = utcDay(now(options));
  // A rejected bundle never serves, not even a shadow run: a SHADOW naming one (a registry from before that rule, or
  // edited) is passed over.
  const shadows = view.descriptors
    .filter((d) => stateIn(view, d) === 'SHADOW' && rejectionOf(store, d.bundle_digest) === null)
    .sort((a, b) => (versionKey(a.version) < versionKey(b.version) ? -1 : 1));
  const skipped = shadows.filter((d) => !isRunnable(view.state.registry, d.version)).map((d) => d.version);
  const release = shadows.find((d) => isRunnable(view.state.registry, d.version));
  const settings = release
    ? (view.state.registry.releases[versionKey(release.version)]?.shadow ?? DEFAULT_SHADOW)
    : DEFAULT_SHADOW;
  const area = knowledge.state();
  const counted = () => readCounter(area, store.scenario, scope, date)?.count ?? 0;
  const base = {
    algorithm: SHADOW_ALGORITHM,
    scenario: store.scenario,
    scope,
    version: release?.version ?? null,
    bundle_digest: release?.bundle_digest ?? null,
    basis_points: settings.basis_points,
    daily_cap: settings.daily_cap,
    date,
    skipped,
  } as const;
  if (!release)
    return {
      ...base,
      status: 'not_sampled',
      reason: 'no_shadow',
      bucket: null,
      consumed: false,
      count: area.exists() ? counted() : 0,
    };
  const bucket = shadowBucket(scope, store.scenario, versionKey(release.version), event);
  if (bucket >= settings.basis_points)
    return {
      ...base,
      status: 'not_sampled',
      reason: 'outside_sample',
      bucket,
      consumed: false,
      count: area.exists() ? counted() : 0,
    };
  if (options.consume !== true) {
    const count = area.exists() ? counted() : 0;
    return {
      ...base,
      status: count < settings.daily_cap ? 'sampled' : 'not_sampled',
      reason: count < settings.daily_cap ? 'sampled' : 'daily_cap',
      bucket,
      consumed: false,
      count,
    };
  }
  return area.withLock(lockTimeout(options), () => {
    const yesterday = utcDay(new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000));
    pruneCounters(area, yesterday);
    const count = counted();
    if (count >= settings.daily_cap)
      return {...base, status: 'not_sampled' as const, reason: 'daily_cap' as const, bucket, consumed: false, count};
    writeCounter(area, {schema_version: 1, scenario: store.scenario, scope, date, count: count + 1});
    return {...base, status: 'sampled' as const, reason: 'sampled' as const, bucket, consumed: true, count: count + 1};
  });
}
