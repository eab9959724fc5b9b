import type {BundleOutline} from '../../model/bundle.js';
import {outlineFromBytes} from '../../model/bundle-outline.js';
import {RootGuard, withBytes} from '../fs.js';

/**
 * The manifests a helper thread of verify takes from a shared queue
 * (src/core/verify-manifests.ts): each claimed by one atomic increment of
 * `claims[0]`, read and checked on the fast path only (outlineFromBytes).
 * `files[i]` is a manifest the main thread's walk found as a regular file
 * reached through real folders, or '' for one it did not (left to the main
 * thread). Only outlines whose every check passed are returned, by index;
 * anything else, a failure included, is left to the main thread's general
 * reader, which names the problem. Light on imports: a helper thread loads
 * only this, the fast path and the file helpers.
 */
export function claimOutlines(root: string, files: readonly string[], digests: readonly string[], claims: Int32Array): Array<[number, BundleOutline]> {
  const guard = new RootGuard(root);
  guard.useSnapshot(guard.root, files.filter((f) => f !== '').map((f) => ({path: f, kind: 'file' as const})), new Map());
  const out: Array<[number, BundleOutline]> = [];
  for (;;) {
    const i = Atomics.add(claims, 0, 1);
    if (i >= digests.length) return out;
    if (files[i] === '') continue;
    try {
      const outline = withBytes(guard, files[i]!, (bytes) => outlineFromBytes(bytes, digests[i]!));
      if (outline) out.push([i, outline]);
    } catch {
      // the main thread reads it again, and names the problem
    }
  }
}
