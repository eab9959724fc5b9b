// npm run bench: prints one table, every figure measured in this run on this machine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {createBundle, validateBundle} from '../dist/model/index.js';
import {canonicalJson} from '../dist/canonical/index.js';
import {init} from '../dist/core/init.js';
import {propose} from '../dist/core/propose.js';
import {printTable, timeCommands, timeIt} from './lib.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rows = [];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'autoctx-bench-'));

// 1. Cold start: `autoctx status --json` on the example tree, as a ratio to `node -e 0`.
const knowledge = path.join(work, 'knowledge');
await init({knowledge, scenario: 'demo', from: path.join(root, 'knowledge-example/demo/baseline')});
await propose({knowledge, from: path.join(root, 'knowledge-example/demo/candidate-better')});
await propose({knowledge, from: path.join(root, 'knowledge-example/demo/candidate-worse'), runId: 'b'});
const statusArgs = [path.join(root, 'bin/run.js'), 'status', '--json', '--knowledge', knowledge];
const [nodeMs, statusMs] = timeCommands([
  [process.execPath, ['-e', '0']],
  [process.execPath, statusArgs],
]);
const ratio = statusMs / nodeMs;
rows.push({
  measure: 'cold start: status --json / node -e 0',
  value: `${ratio.toFixed(2)}x (${statusMs.toFixed(0)} ms / ${nodeMs.toFixed(0)} ms)`,
  target: '<= 3x',
  ok: ratio <= 3,
  command: 'node bin/run.js status --json --knowledge <example tree>  vs  node -e 0 (median of 15, interleaved)',
});

// 2. Build and validate a bundle of 50 components of 2 KB each.
const components = Array.from({length: 50}, (_, i) => ({
  kind: ['playbook', 'hints', 'prompt_fragment', 'tool_guidance', 'completion_check'][i % 5],
  key: `component-${String(i).padStart(2, '0')}`,
  content: `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(36)}`.slice(0, 2048),
  media_type: 'text/markdown',
}));
const input = {scenario: 'bench', evaluator_epoch: 'epoch-1', parent_digest: null, components};
const text = JSON.stringify(createBundle(input));
const buildValidate = timeIt(() => validateBundle(JSON.parse(JSON.stringify(createBundle(input)))), {runs: 300});
const buildOnly = timeIt(() => createBundle(input), {runs: 300});
const validateOnly = timeIt(() => validateBundle(JSON.parse(text)), {runs: 300});
rows.push({
  measure: 'build + validate 50 x 2 KB bundle',
  value: `${buildValidate.toFixed(3)} ms (build ${buildOnly.toFixed(3)}, parse+validate ${validateOnly.toFixed(3)})`,
  target: '<= 1.5 ms',
  ok: buildValidate <= 1.5,
  command: 'createBundle + JSON round trip + validateBundle, in process (median of 300)',
});

printTable(rows);
console.log(`\nmachine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}; canonical sample length ${canonicalJson(input).length} bytes`);
fs.rmSync(work, {recursive: true, force: true});
