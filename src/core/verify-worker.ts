// The worker thread of verify: checks its half of a scenario's manifests (verify-manifests.ts).
import {parentPort, workerData} from 'node:worker_threads';
import {KnowledgeStore} from '../store/index.js';
import {checkManifest} from './verify-manifests.js';

const {root, scenario, digests} = workerData as {root: string; scenario: string; digests: string[]};
try {
  const store = KnowledgeStore.open(root).scenario(scenario);
  parentPort!.postMessage(digests.map((d) => checkManifest(store, d)));
} catch (error) {
  parentPort!.postMessage({failed: String(error)}); // the main thread checks this half itself
}
