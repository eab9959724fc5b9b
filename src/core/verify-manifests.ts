import os from 'node:os';
import {Worker} from 'node:worker_threads';
import {AutoctxError, isAutoctxError, type ErrorCode} from '../errors.js';
import {type BundleOutline} from '../model/bundle.js';
import {type ScenarioStore} from '../store/index.js';

export type {BundleOutline} from '../model/bundle.js';

/** One manifest's check: its outline (null when the file is absent), or the typed error its reader raised. */
export type ManifestCheck = {digest: string; outline: BundleOutline | null} | {digest: string; error: {code: ErrorCode; message: string; data?: Record<string, unknown> | undefined}};

/** Read, re-hash and validate one manifest. */
export function checkManifest(store: ScenarioStore, digest: string): ManifestCheck {
  try {
    return {digest, outline: store.readBundleOutline(digest)};
  } catch (error) {
    if (!isAutoctxError(error)) throw error;
    return {digest, error: {code: error.code, message: error.message, data: error.data}};
  }
}

/** The outline, or the reader's error raised again. */
export function manifestOutline(check: ManifestCheck): BundleOutline | null {
  if ('error' in check) throw new AutoctxError(check.error.code, check.error.message, check.error.data);
  return check.outline;
}

/**
 * Below this many bytes of manifests a helper thread is not worth starting:
 * it takes about 50 ms to start and load its modules, during which the main
 * thread has checked most of a small scenario's manifests itself
 * (docs/performance.md).
 */
export const PARALLEL_BYTES = 24 << 20;

/**
 * Check manifests on this thread and, when there are enough of them and a
 * second core, on a helper thread at the same time: both take the next
 * manifest from one shared queue (an atomic counter), so neither waits for
 * the other however long the helper takes to start. The helper takes only
 * the fast path (src/store/kinds/bundle-fast.ts) and only manifests this
 * thread's walk found as regular files; whatever it does not return, a
 * manifest that needs the general reader or a helper that failed in any way,
 * is checked here. The result is in the order of `digests` and equal to
 * checking them one by one here.
 */
export async function checkManifests(store: ScenarioStore, digests: readonly string[]): Promise<ManifestCheck[]> {
  // AUTOCTX_VERIFY_THREADS (a testing aid): 1 for one thread, 2 for two whatever the size, 'helper' for
  // two with the helper taking every manifest it can before this thread takes any.
  const threads = process.env.AUTOCTX_VERIFY_THREADS;
  const forced = threads === '2' || threads === 'helper';
  const alone = threads === '1' || digests.length < 2 || (!forced && os.availableParallelism() < 2);
  if (alone || (!forced && store.manifestBytes(digests) < PARALLEL_BYTES)) {
    return digests.map((d) => checkManifest(store, d));
  }
  const claims = new Int32Array(new SharedArrayBuffer(4));
  const files = digests.map((d) => {
    const file = store.paths.bundle(d);
    return store.guard.walkedFile(file) ? file : '';
  });
  let answer: Promise<unknown>;
  let worker: Worker | undefined;
  try {
    worker = new Worker(new URL('./verify-worker.js', import.meta.url), {workerData: {root: store.guard.root, files, digests, claims: claims.buffer}});
    const w = worker;
    answer = new Promise((resolve) => {
      w.once('message', resolve);
      w.once('error', () => resolve(undefined));
      w.once('exit', () => resolve(undefined));
    });
  } catch {
    answer = Promise.resolve(undefined);
  }
  const checks: Array<ManifestCheck | undefined> = Array.from({length: digests.length}, () => undefined);
  if (threads === 'helper') await answer;
  for (;;) {
    const i = Atomics.add(claims, 0, 1);
    if (i >= digests.length) break;
    checks[i] = checkManifest(store, digests[i]!);
  }
  const theirs = await answer;
  await worker?.terminate();
  if (Array.isArray(theirs)) {
    for (const item of theirs as Array<[number, BundleOutline]>) {
      const [i, outline] = item;
      if (Number.isInteger(i) && i >= 0 && i < digests.length && checks[i] === undefined && outline?.digest === digests[i]) checks[i] = {digest: digests[i]!, outline};
    }
  }
  return checks.map((c, i) => c ?? checkManifest(store, digests[i]!));
}
