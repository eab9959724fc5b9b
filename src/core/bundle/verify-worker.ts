// The helper thread of verify: takes manifests from the queue it shares with the main thread (verify-manifests.ts).
import {parentPort, receiveMessageOnPort, type MessagePort} from 'node:worker_threads';
import {claimOutlines, warmUp} from '../../store/kinds/bundle/bundle-fast.js';

type Work = {root: string; files: string[]; digests: string[]; queue: SharedArrayBuffer; port: MessagePort};

function run(work: Work): void {
  // biome-ignore lint/plugin: the thread's boundary: the main thread is told, and checks what is left
  try {
    claimOutlines(work.root, work.files, work.digests, new Int32Array(work.queue), (packed) =>
      work.port.postMessage(packed),
    );
    parentPort!.postMessage('done');
  } catch (error) {
    parentPort!.postMessage({failed: String(error)}); // the main thread checks whatever this thread left
  } finally {
    work.port.close();
  }
}

// It is started before the main thread has walked the tree. Until the manifests come (a message), it runs
// the fast path over a made-up manifest, so that its code is compiled by the time the real ones arrive.
const port = parentPort as unknown as MessagePort;
const early = warmUp(() => receiveMessageOnPort(port));
if (early) run(early.message as Work);
else parentPort!.once('message', run);
