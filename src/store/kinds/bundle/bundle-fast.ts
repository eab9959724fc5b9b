import type {BundleOutline} from '../../../model/bundle/bundle.js';
import {COMPONENT_KINDS, type ComponentKind} from '../../../model/bundle/kinds.js';
import {outlineFromBytes} from '../../../model/bundle/bundle-outline.js';
import {createBundle} from '../../../model/bundle/bundle.js';
import {prettyJson} from '../../../canonical/index.js';
import {RootGuard, withBytes} from '../../files/fs.js';

/**
 * An outline as it crosses between threads: a few strings and arrays of
 * numbers instead of an object per component, which a structured clone
 * rebuilds one by one (for 300 manifests of 50 components, 7 to 30 ms on the
 * receiving thread, against under 3 ms to unpack this).
 */
export type PackedOutline = [
  index: number,
  scenario: string,
  epoch: string,
  parent: string | null,
  digest: string,
  kinds: number[],
  texts: string,
  lengths: number[],
  digests: string,
];

export function packOutline(index: number, o: BundleOutline): PackedOutline {
  const lengths: number[] = [];
  let texts = '';
  let digests = '';
  for (const c of o.components) {
    texts += c.key + c.media_type;
    lengths.push(c.key.length, c.media_type.length);
    digests += c.digest;
  }
  return [
    index,
    o.scenario,
    o.evaluator_epoch,
    o.parent_digest,
    o.digest,
    o.components.map((c) => COMPONENT_KINDS.indexOf(c.kind as ComponentKind)),
    texts,
    lengths,
    digests,
  ];
}

export function unpackOutline(p: PackedOutline): [number, BundleOutline] {
  const [index, scenario, evaluator_epoch, parent_digest, digest, kinds, texts, lengths, digests] = p;
  const components: BundleOutline['components'] = [];
  let at = 0;
  for (let j = 0; j < kinds.length; j++) {
    const key = texts.slice(at, (at += lengths[2 * j]!));
    const media_type = texts.slice(at, (at += lengths[2 * j + 1]!));
    components.push({kind: COMPONENT_KINDS[kinds[j]!]!, key, media_type, digest: digests.slice(64 * j, 64 * j + 64)});
  }
  return [index, {schema_version: 1, scenario, evaluator_epoch, parent_digest, components, digest}];
}

/**
 * The queue the main thread of verify and its helper share
 * (src/core/bundle/verify-manifests.ts), in one Int32Array over shared memory:
 * `[0]` counts the helper's turns, `[1 + i]` is manifest i's state. Either
 * thread claims a manifest by moving its state from FREE, once.
 */
export const FREE = 0;
/** Claimed by the main thread, which checks it itself. */
export const MAIN = 1;
/** Claimed by the helper, being checked. */
export const HELPER = 2;
/** Checked by the helper, its outline posted (the message is on the port before the state says so). */
export const POSTED = 3;
/** Claimed by the helper and left: not on the fast path, or a failure; the main thread checks it. */
export const LEFT = 4;

/**
 * The helper's side of the queue: it takes the manifests from the last one
 * back (the main thread, checking candidates, asks for theirs mostly from the
 * first), checks each on the fast path only
 * (outlineFromBytes) and posts the outline of each that passed, packed, on
 * `post`; anything else, a failure included, it leaves to the main thread's
 * general reader, which names the problem. `files[i]` is a manifest the main
 * thread's walk found as a regular file reached through real folders, or ''
 * for one it did not (the main thread's). Light on imports: a helper thread
 * loads only this, the fast path and the file helpers.
 */
export function claimOutlines(
  root: string,
  files: readonly string[],
  digests: readonly string[],
  queue: Int32Array,
  post: (packed: PackedOutline) => void,
): void {
  const guard = new RootGuard(root);
  guard.useSnapshot(
    guard.root,
    files.filter((f) => f !== '').map((f) => ({path: f, kind: 'file' as const})),
    new Map(),
  );
  const n = digests.length;
  for (;;) {
    const turn = Atomics.add(queue, 0, 1);
    if (turn >= n) return;
    const i = n - 1 - turn;
    if (files[i] === '' || Atomics.compareExchange(queue, 1 + i, FREE, HELPER) !== FREE) continue;
    let packed: PackedOutline | null = null;
    // biome-ignore lint/plugin: any failure leaves the manifest to the main thread, which reads it again and names it
    try {
      const outline = withBytes(guard, files[i]!, (bytes) => outlineFromBytes(bytes, digests[i]!));
      if (outline) packed = packOutline(i, outline);
    } catch {
      // the main thread reads it again, and names the problem
    }
    if (packed) post(packed);
    Atomics.store(queue, 1 + i, packed ? POSTED : LEFT);
    Atomics.notify(queue, 1 + i);
  }
}

/** At most this long on the warm-up (the main thread's walk takes about as long on a large tree). */
const WARM_UP_MS = 25;

/**
 * The helper thread, while it waits: check a made-up manifest on the fast path
 * again and again, so that V8 has compiled that code by the time the real
 * manifests come; `arrived` is asked before each round, and what it returns
 * (the work, come early) ends the warm-up.
 */
export function warmUp<T>(arrived: () => T | undefined): T | undefined {
  const kinds = ['hints', 'playbook', 'tool_guidance'] as const;
  const components = Array.from({length: 24}, (_, i) => ({
    kind: kinds[i % 3]!,
    key: `part-${i}`,
    content: `Warm-up text ${i}.\n`.repeat(60),
  }));
  const b = createBundle({scenario: 'warm-up', evaluator_epoch: 'warm-up', parent_digest: null, components});
  const bytes = Buffer.from(prettyJson(b), 'utf8');
  const until = performance.now() + WARM_UP_MS;
  while (performance.now() < until) {
    const work = arrived();
    if (work !== undefined) return work;
    outlineFromBytes(bytes, b.digest);
  }
  return arrived();
}
