import os from 'node:os';
import {fileURLToPath} from 'node:url';
import {MessageChannel, receiveMessageOnPort, Worker, type MessagePort} from 'node:worker_threads';
import {AutoctxError, isAutoctxError, isSystemError, rethrowUnless, type ErrorCode} from '../../errors.js';
import {type BundleOutline} from '../../model/bundle/bundle.js';
import {type ScenarioStore} from '../../store/index.js';
import {exists} from '../../store/files/fs.js';
import {
  FREE,
  HELPER,
  LEFT,
  MAIN,
  POSTED,
  unpackOutline,
  type PackedOutline,
} from '../../store/kinds/bundle/bundle-fast.js';
import {listBundleDigests, manifestBytes, readBundleOutline} from '../../store/kinds/bundle/bundle.js';

export type {BundleOutline} from '../../model/bundle/bundle.js';

/** One manifest's check: its outline (null when the file is absent), or the typed error its reader raised. */
export type ManifestCheck =
  | {digest: string; outline: BundleOutline | null}
  | {digest: string; error: {code: ErrorCode; message: string; data?: Record<string, unknown> | undefined}};

/** Read, re-hash and validate one manifest. */
export function checkManifest(store: ScenarioStore, digest: string): ManifestCheck {
  try {
    return {digest, outline: readBundleOutline(store, digest)};
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
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
 * The manifests' total size, from the sizes of at most 32 of them spread over the list (an estimate: one stat each).
 */
function estimatedBytes(store: ScenarioStore, digests: readonly string[]): number {
  const step = Math.max(1, Math.floor(digests.length / 32));
  const sample = digests.filter((_, i) => i % step === 0);
  return (manifestBytes(store, sample) * digests.length) / sample.length;
}

/**
 * The helper's code: the bundled one (one file) when this module runs from
 * the compiled tree beside it, which starts about 30 ms sooner than loading
 * the compiled modules one by one; else the one beside this module (the
 * bundle itself, or tests run from the sources).
 */
function workerFile(): URL {
  const here = new URL('./verify-worker.js', import.meta.url);
  const bundled = new URL('../../bundle/verify-worker.js', import.meta.url);
  return here.pathname.endsWith('/dist/core/bundle/verify-worker.js') && exists(fileURLToPath(bundled))
    ? bundled
    : here;
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
    this.worker = new Worker(workerFile());
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
        const digests = listBundleDigests(store);
        if (digests.length < 2 || estimatedBytes(store, digests) < PARALLEL_BYTES) return null;
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        return null; // the walk names what is wrong with the folder
      }
    }
    // biome-ignore lint/plugin: no helper thread to be had here: the main thread checks every manifest itself
    try {
      return new ManifestHelper();
    } catch {
      return null;
    }
  }

  /**
   * Hand it one scenario's manifests (once): it posts the outlines it checks
   * on the returned port, which this thread reads without waiting for its
   * event loop (receiveMessageOnPort).
   */
  take(work: {
    root: string;
    files: string[];
    digests: readonly string[];
    queue: SharedArrayBuffer;
  }): MessagePort | null {
    if (this.used) return null;
    this.used = true;
    const {port1, port2} = new MessageChannel();
    this.worker.postMessage({...work, port: port2}, [port2]);
    return port1;
  }

  /** Stop it without waiting (a thread still starting can take tens of milliseconds to stop). */
  stop(): void {
    this.worker.unref();
    void this.worker.terminate();
  }
}

/**
 * How long this thread waits for a manifest the helper is checking before it checks it itself (a helper that hangs or
 * died).
 */
const HELPER_PATIENCE_MS = 2000;

/**
 * One scenario's manifests, each checked once, when first asked for: on this
 * thread, or by the helper, which takes them from the other end of a shared
 * queue (claimOutlines) meanwhile. verify checks the candidates first and
 * asks for each manifest as a candidate needs it, so that the helper checks
 * manifests while this thread checks candidates; the answers are the same
 * whichever thread checked what. The helper takes only the fast path
 * (src/store/kinds/bundle/bundle-fast.ts) and only manifests this thread's walk
 * found as regular files; whatever it leaves (a manifest that needs the
 * general reader, a failure, a helper that never started or stopped
 * answering) is checked here.
 */
export class ManifestChecks {
  private readonly checks: Array<ManifestCheck | undefined>;
  private readonly index = new Map<string, number>();
  private queue: Int32Array | null = null;
  private port: MessagePort | null = null;

  private constructor(
    private readonly store: ScenarioStore,
    readonly digests: readonly string[],
  ) {
    this.checks = Array.from({length: digests.length}, () => undefined);
    digests.forEach((d, i) => this.index.set(d, i));
  }

  /** Checked on this thread alone. */
  static sync(store: ScenarioStore, digests: readonly string[]): ManifestChecks {
    return new ManifestChecks(store, digests);
  }

  /**
   * The manifests of `digests`, shared with the helper when there is one and
   * at least two of them. AUTOCTX_VERIFY_THREADS=helper (a testing aid) waits
   * for the helper to take every manifest it can, and checks the rest, before
   * verify checks any candidate (which it then takes in reverse order).
   */
  static async open(
    store: ScenarioStore,
    digests: readonly string[],
    helper: ManifestHelper | null,
  ): Promise<ManifestChecks> {
    const checks = new ManifestChecks(store, digests);
    if (helper === null || digests.length < 2) return checks;
    const queue = new Int32Array(new SharedArrayBuffer(4 * (digests.length + 1)));
    const files = digests.map((d) => {
      const file = store.paths.bundle(d);
      return store.guard.walkedFile(file) ? file : '';
    });
    const port = helper.take({root: store.guard.root, files, digests, queue: queue.buffer});
    if (port === null) return checks;
    port.unref();
    checks.queue = queue;
    checks.port = port;
    if (process.env.AUTOCTX_VERIFY_THREADS === 'helper') {
      // Every manifest checked before any candidate: verify then takes every candidate from the back.
      await helper.answer;
      digests.forEach((_, i) => checks.at(i));
    }
    return checks;
  }

  /** The outline of manifest `digest` when it verified; undefined when it did not, or is not one of this scenario's. */
  outline(digest: string): BundleOutline | undefined {
    const i = this.index.get(digest);
    if (i === undefined) return undefined;
    const check = this.at(i);
    return 'error' in check ? undefined : (check.outline ?? undefined);
  }

  /**
   * Whether asking for `digest`'s outline, and its parent's, would take no
   * work on this thread now: each is checked already (by either thread), or
   * is not a manifest of this scenario.
   */
  ready(digest: string): boolean {
    this.receive();
    const known = (d: string) => {
      const i = this.index.get(d);
      return i === undefined ? true : this.checks[i] !== undefined;
    };
    if (!known(digest)) return false;
    const parent = this.outline(digest)?.parent_digest;
    return !parent || known(parent);
  }

  /** Every manifest's check, in the order of `digests`; the helper's part is over when this returns. */
  all(): ManifestCheck[] {
    const all = this.digests.map((_, i) => this.at(i));
    this.port?.close();
    this.port = null;
    this.queue = null;
    return all;
  }

  private at(i: number): ManifestCheck {
    const known = this.checks[i];
    if (known !== undefined) return known;
    const q = this.queue;
    if (q !== null && Atomics.compareExchange(q, 1 + i, FREE, MAIN) !== FREE) this.awaitHelper(q, i);
    return (this.checks[i] ??= checkManifest(this.store, this.digests[i]!));
  }

  /** Wait until the helper has posted or left manifest i, taking in the outlines it posted meanwhile. */
  private awaitHelper(q: Int32Array, i: number): void {
    const until = performance.now() + HELPER_PATIENCE_MS;
    for (;;) {
      this.receive();
      if (this.checks[i] !== undefined) return;
      const state = Atomics.load(q, 1 + i);
      // Its outline is posted before its state says so: taken in now, or it was not this manifest's.
      if (state === POSTED) {
        this.receive();
        return;
      }
      if (state !== HELPER) return; // left to this thread
      const left = until - performance.now();
      if (left <= 0) return;
      Atomics.wait(q, 1 + i, HELPER, Math.min(left, 50));
    }
  }

  /** Take in every outline the helper has posted so far. */
  private receive(): void {
    if (this.port === null) return;
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) {
      const [i, outline] = unpackOutline(m.message as PackedOutline);
      if (
        Number.isInteger(i) &&
        i >= 0 &&
        i < this.digests.length &&
        this.checks[i] === undefined &&
        outline?.digest === this.digests[i]
      )
        this.checks[i] = {digest: this.digests[i]!, outline};
    }
  }
}
