// The helper thread of verify: takes manifests from the queue it shares with the main thread (verify-manifests.ts).
import {parentPort, receiveMessageOnPort, type MessagePort} from 'node:worker_threads';
import {claimOutlines, warmUp} from '../store/kinds/bundle-fast.js';

type Work = {root: string; files: string[]; digests: string[]; claims: SharedArrayBuffer};

function run(work: Work): void {
  try {
    parentPort!.postMessage(claimOutlines(work.root, work.files, work.digests, new Int32Array(work.claims)));
  } catch (error) {
    parentPort!.postMessage({failed: String(error)}); // the main thread checks what this thread claimed itself
  }
}

// It is started before the main thread has walked the tree. Until the manifests come (a message), it runs
// the fast path over a made-up manifest, so that its code is compiled by the time the real ones arrive.
const port = parentPort as unknown as MessagePort;
const early = warmUp(() => receiveMessageOnPort(port));
if (early) run(early.message as Work);
else parentPort!.once('message', run);
