import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {canonicalJson} from '../../src/canonical/index.js';
import {createCausalAttribution, manifestDiff, matchedTrialFromDict, validateBundle} from '../../src/model/index.js';
import {FIXTURES, SAMPLE_KNOWLEDGE} from '../helpers/paths.js';

const demo = path.join(SAMPLE_KNOWLEDGE, 'demo/context_bundles');
const read = (rel: string) => JSON.parse(fs.readFileSync(path.join(demo, rel), 'utf8'));

describe('causal attribution', () => {
  it('reproduces the attribution the Python implementation wrote, digests included', () => {
    const d = '6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252';
    const tested = validateBundle(read(`bundles/${d}.json`));
    const comparison = validateBundle(
      read('bundles/9fe14ef551d9ecddd152d0826d2e636e63613b62684ce950f45f8e7a936b71bb.json'),
    );
    const trials = read(`candidates/${d}/matched_trials.json`).trials.map((t: unknown) => matchedTrialFromDict(t));
    const made = createCausalAttribution(tested, comparison, manifestDiff(tested, comparison), trials);
    expect(canonicalJson(made)).toBe(canonicalJson(read(`candidates/${d}/causal_attribution.json`)));
  });

  it('is never written for a replacement or a multi-component edit', () => {
    const parity = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'manifest-parity.json'), 'utf8'));
    const candidate = validateBundle(parity.candidate);
    const baseline = validateBundle(parity.baseline);
    expect(createCausalAttribution(candidate, baseline, manifestDiff(candidate, baseline), [])).toBeNull();
  });
});
