import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {bundleDigest, createBundle, validateBundle} from '../../src/model/bundle/bundle.js';
import {componentDigest} from '../../src/model/bundle/component.js';
import {schemaProblem} from '../../src/store/schemas.js';

// A stored manifest is checked by validateBundle alone, and by its JSON Schema only when
// validateBundle refuses it (src/store/documents.ts, ImpliedSchema). That is sound only if every
// manifest the schema refuses, validateBundle refuses too: checked here over generated damage.

const valid = createBundle({
  scenario: 'demo',
  evaluator_epoch: 'epoch-1',
  parent_digest: 'a'.repeat(64),
  components: [
    {kind: 'playbook', key: 'playbook', content: 'Be helpful.\n', media_type: 'text/markdown'},
    {kind: 'routing_config', key: 'roles', content: '{"model":"small"}', media_type: 'application/json'},
  ],
});

const other = fc.oneof(
  fc.constantFrom(
    null,
    true,
    0,
    1,
    -1,
    1.5,
    '',
    ' ',
    '\t\n',
    'x',
    'A'.repeat(64),
    'a'.repeat(63),
    'g'.repeat(64),
    'epoch-1',
    'playbook',
    'unknown_kind',
    [],
    {},
    ['a'],
    {a: 1},
  ),
  fc.string(),
);

type Damage = (m: Record<string, any>) => void;
const damage: fc.Arbitrary<Damage> = fc.oneof(
  fc
    .record({
      key: fc.constantFrom(
        'schema_version',
        'scenario',
        'evaluator_epoch',
        'parent_digest',
        'components',
        'digest',
        'extra',
      ),
      to: other,
      remove: fc.boolean(),
    })
    .map(({key, to, remove}) => (m: Record<string, any>) => {
      if (remove) delete m[key];
      else m[key] = to;
    }),
  fc
    .record({
      i: fc.nat({max: 2}),
      key: fc.constantFrom('kind', 'key', 'content', 'media_type', 'digest', 'extra'),
      to: other,
      remove: fc.boolean(),
    })
    .map(({i, key, to, remove}) => (m: Record<string, any>) => {
      if (!Array.isArray(m.components)) return;
      const c = m.components[i];
      if (c === null || typeof c !== 'object') m.components[i] = to;
      else if (remove) delete c[key];
      else c[key] = to;
    }),
);

/**
 * Digests recomputed after the damage, as a careless writer would: then only the structural checks stand in the way.
 */
function reseal(m: Record<string, any>): void {
  try {
    for (const c of m.components) c.digest = componentDigest(c);
  } catch {
    // a component too damaged to hash keeps its digest
  }
  try {
    m.digest = bundleDigest(m as never);
  } catch {
    // likewise
  }
}

describe('the manifest schema is implied by validateBundle', () => {
  it('every damaged manifest the schema refuses, validateBundle refuses', () => {
    let refusedBySchema = 0;
    fc.assert(
      fc.property(fc.array(damage, {minLength: 1, maxLength: 3}), fc.boolean(), (damages, resealed) => {
        const m = structuredClone(valid) as unknown as Record<string, any>;
        for (const d of damages) d(m);
        if (resealed) reseal(m);
        if (schemaProblem('manifest', m) !== null) {
          refusedBySchema++;
          expect(() => validateBundle(m)).toThrow();
        }
      }),
      {numRuns: 2000, seed: 11},
    );
    expect(refusedBySchema).toBeGreaterThan(1000);
    expect(schemaProblem('manifest', structuredClone(valid))).toBeNull();
  });
});
