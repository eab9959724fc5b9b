// The helper thread of verify: takes manifests from the queue it shares with the main thread (verify-manifests.ts).
import {parentPort} from 'node:worker_threads';
import {claimOutlines} from '../store/kinds/bundle-fast.js';

// It is started before the main thread has walked the tree, and waits for the manifests in a message.
parentPort!.once('message', (work: {root: string; files: string[]; digests: string[]; claims: SharedArrayBuffer}) => {
  try {
    parentPort!.postMessage(claimOutlines(work.root, work.files, work.digests, new Int32Array(work.claims)));
  } catch (error) {
    parentPort!.postMessage({failed: String(error)}); // the main thread checks what this thread claimed itself
  }
});
