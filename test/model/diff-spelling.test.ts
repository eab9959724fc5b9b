import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {canonicalJson, prettyJson, stableDigest} from '../../src/canonical/index.js';
import type {ComponentKind} from '../../src/model/bundle/kinds.js';
import {diffCanonicalJson, diffPrettyJson, manifestDiff, type ManifestChange} from '../../src/model/bundle/diff.js';

// A diff is spelled by hand for its one shape (manifestDiff's digest, and verify's
// byte-for-byte comparison with the stored file). Both spellings must equal the general encoders'.

const hex = fc.string({unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64});
const name = fc.oneof(
  fc.string({unit: 'grapheme-ascii', minLength: 1, maxLength: 10}),
  fc.constantFrom('caf\u00e9', 'quote " and \\ back', 'tab\there', '\u{1F600}', 'line\nbreak'),
);
const change: fc.Arbitrary<ManifestChange> = fc.record({
  comparison_component_digest: fc.option(hex, {nil: null}),
  component_key: name,
  component_kind: fc.constantFrom('playbook', 'hints', 'prompt_fragment'),
  tested_component_digest: fc.option(hex, {nil: null}),
});
const body = fc.record({
  changes: fc.array(change, {maxLength: 5}),
  comparison_bundle_digest: hex,
  evaluator_epoch: name,
  schema_version: fc.constant(1 as const),
  tested_bundle_digest: hex,
});

describe('the spellings of a manifest diff', () => {
  it('equal canonicalJson and prettyJson of the same diff', () => {
    fc.assert(
      fc.property(body, hex, (b, digest) => {
        expect(diffCanonicalJson(b)).toBe(canonicalJson(b));
        expect(diffPrettyJson({...b, digest})).toBe(prettyJson({...b, digest}));
      }),
      {numRuns: 500, seed: 2030},
    );
  });

  it('give manifestDiff the digest stableDigest gives its body', () => {
    const side = (digest: string, components: Array<{kind: ComponentKind; key: string; digest: string}>) => ({
      digest,
      evaluator_epoch: 'e1',
      components,
    });
    const d = manifestDiff(
      side('a'.repeat(64), [{kind: 'hints', key: 'k', digest: 'b'.repeat(64)}]),
      side('c'.repeat(64), [{kind: 'playbook', key: 'p', digest: 'd'.repeat(64)}]),
    );
    const {digest, ...rest} = d;
    expect(d.changes).toHaveLength(2);
    expect(digest).toBe(stableDigest(rest));
  });
});
