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
 * Below this many bytes of manifests a second thread costs more than it saves:
 * starting it and loading its modules takes about 50 ms, and two threads check
 * manifests only about 1.3 times as fast as one (they share the memory
 * bandwidth), measured on a 2-core machine (docs/performance.md).
 */
export const PARALLEL_BYTES = 48 << 20;

/**
 * Check manifests on this thread and, when there are enough of them and a
 * second core, half of them on a worker thread at the same time: re-hashing
 * the component texts is most of verify's work. The result is in the order of
 * `digests` and equal to checking them one by one here; a worker that fails
 * in any way leaves its half to this thread.
 */
export async function checkManifests(store: ScenarioStore, digests: readonly string[]): Promise<ManifestCheck[]> {
  // AUTOCTX_VERIFY_THREADS (a testing aid): 1 for one thread, 2 for two whatever the size.
  const threads = process.env.AUTOCTX_VERIFY_THREADS;
  const alone = threads === '1' || digests.length < 2 || os.availableParallelism() < 2;
  if (alone || (threads !== '2' && store.manifestBytes(digests) < PARALLEL_BYTES)) {
    return digests.map((d) => checkManifest(store, d));
  }
  const theirs = digests.filter((_, i) => i % 2 === 1);
  let answer: Promise<ManifestCheck[] | undefined>;
  let worker: Worker | undefined;
  try {
    worker = new Worker(new URL('./verify-worker.js', import.meta.url), {workerData: {root: store.guard.root, scenario: store.scenario, digests: theirs}});
    const w = worker;
    answer = new Promise((resolve) => {
      w.once('message', (m: unknown) => resolve(Array.isArray(m) ? (m as ManifestCheck[]) : undefined));
      w.once('error', () => resolve(undefined));
      w.once('exit', () => resolve(undefined));
    });
  } catch {
    answer = Promise.resolve(undefined);
  }
  const mine = digests.filter((_, i) => i % 2 === 0).map((d) => checkManifest(store, d));
  const done = await answer;
  await worker?.terminate();
  const other = done && done.length === theirs.length && done.every((c, i) => c.digest === theirs[i]) ? done : theirs.map((d) => checkManifest(store, d));
  return digests.map((_, i) => (i % 2 === 0 ? mine[i / 2]! : other[(i - 1) / 2]!));
}
