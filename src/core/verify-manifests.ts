import os from 'node:os';
import {Worker} from 'node:worker_threads';
import {AutoctxError, isAutoctxError, type ErrorCode} from '../errors.js';
import {type BundleOutline} from '../model/bundle.js';
import {type ScenarioStore} from '../store/index.js';
import {unpackOutline, type PackedOutline} from '../store/kinds/bundle-fast.js';

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

/** The manifests' total size, from the sizes of at most 32 of them spread over the list (an estimate: one stat each). */
function estimatedBytes(store: ScenarioStore, digests: readonly string[]): number {
  const step = Math.max(1, Math.floor(digests.length / 32));
  const sample = digests.filter((_, i) => i % step === 0);
  return (store.manifestBytes(sample) * digests.length) / sample.length;
}

/**
 * verify's helper thread, started before verify walks the tree so that it
 * has started and loaded its modules by the time there are manifests to
 * check; it waits for them (a message) and is stopped unused when there are
 * too few.
 */
export class ManifestHelper {
  private readonly worker: Worker;
  readonly answer: Promise<unknown>;
  /** Whether it was handed a scenario. */
  used = false;

  private constructor() {
    this.worker = new Worker(new URL('./verify-worker.js', import.meta.url));
    const w = this.worker;
    this.answer = new Promise((resolve) => {
      w.once('message', resolve);
      w.once('error', () => resolve(undefined));
      w.once('exit', () => resolve(undefined));
    });
  }

  /**
   * A helper for a scenario whose manifests come to PARALLEL_BYTES or more,
   * when there is a second core (and AUTOCTX_VERIFY_THREADS is not 1); else
   * null. Asked before the walk: it lists the manifests and measures a few.
   */
  static startFor(store: ScenarioStore): ManifestHelper | null {
    const threads = process.env.AUTOCTX_VERIFY_THREADS;
    if (threads === '1') return null;
    if (threads !== '2' && threads !== 'helper') {
      if (os.availableParallelism() < 2) return null;
      try {
        const digests = store.listBundleDigests();
        if (digests.length < 2 || estimatedBytes(store, digests) < PARALLEL_BYTES) return null;
      } catch {
        return null; // the walk names what is wrong with the folder
      }
    }
    try {
      return new ManifestHelper();
    } catch {
      return null;
    }
  }

  /** Hand it one scenario's manifests (once). */
  take(work: {root: string; files: string[]; digests: readonly string[]; claims: SharedArrayBuffer}): boolean {
    if (this.used) return false;
    this.used = true;
    this.worker.postMessage(work);
    return true;
  }

  /** Stop it without waiting (a thread still starting can take tens of milliseconds to stop). */
  stop(): void {
    this.worker.unref();
    void this.worker.terminate();
  }
}

/**
 * Check manifests on this thread and, when there are enough of them and a
 * helper thread, on it at the same time: both take the next manifest from one
 * shared queue (an atomic counter), so neither waits for the other however
 * long the helper takes to start. The helper takes only the fast path
 * (src/store/kinds/bundle-fast.ts) and only manifests this thread's walk
 * found as regular files; whatever it does not return, a manifest that needs
 * the general reader or a helper that failed in any way, is checked here.
 * The result is in the order of `digests` and equal to checking them one by
 * one here.
 */
export async function checkManifests(store: ScenarioStore, digests: readonly string[], helper: ManifestHelper | null): Promise<ManifestCheck[]> {
  // AUTOCTX_VERIFY_THREADS (a testing aid): 1 for one thread, 2 for two whatever the size, 'helper' for
  // two with the helper taking every manifest it can before this thread takes any.
  const threads = process.env.AUTOCTX_VERIFY_THREADS;
  const claims = new Int32Array(new SharedArrayBuffer(4));
  const files = () =>
    digests.map((d) => {
      const file = store.paths.bundle(d);
      return store.guard.walkedFile(file) ? file : '';
    });
  const helping = helper !== null && digests.length >= 2 && helper.take({root: store.guard.root, files: files(), digests, claims: claims.buffer});
  if (!helping) return digests.map((d) => checkManifest(store, d));
  const checks: Array<ManifestCheck | undefined> = Array.from({length: digests.length}, () => undefined);
  if (threads === 'helper') await helper.answer;
  for (;;) {
    const i = Atomics.add(claims, 0, 1);
    if (i >= digests.length) break;
    checks[i] = checkManifest(store, digests[i]!);
  }
  const theirs = await helper.answer;
  if (Array.isArray(theirs)) {
    for (const packed of theirs as PackedOutline[]) {
      const [i, outline] = unpackOutline(packed);
      if (Number.isInteger(i) && i >= 0 && i < digests.length && checks[i] === undefined && outline?.digest === digests[i]) checks[i] = {digest: digests[i]!, outline};
    }
  }
  return checks.map((c, i) => c ?? checkManifest(store, digests[i]!));
}
