// The helper thread of verify: takes manifests from the queue it shares with the main thread (verify-manifests.ts).
import {parentPort, workerData} from 'node:worker_threads';
import {claimOutlines} from '../store/kinds/bundle-fast.js';

const {root, files, digests, claims} = workerData as {root: string; files: string[]; digests: string[]; claims: SharedArrayBuffer};
try {
  parentPort!.postMessage(claimOutlines(root, files, digests, new Int32Array(claims)));
} catch (error) {
  parentPort!.postMessage({failed: String(error)}); // the main thread checks what this thread claimed itself
}
