import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {createBundle, validateBundle} from '../../src/model/bundle/bundle.js';
import {createComponent} from '../../src/model/bundle/component.js';
import {canonicalJson} from '../../src/canonical/index.js';
import {isAutoctxError} from '../../src/errors.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

interface Vectors {
  marker_prefix: string;
  components: Array<{
    hashed_text: string;
    component: {kind: string; key: string; content: string; media_type: string; digest: string; state?: string};
  }>;
  bundles: Array<{
    hashed_text: string;
    manifest: Record<string, unknown> & {digest: string; components: Array<Record<string, string>>};
  }>;
}
const vectors = JSON.parse(
  fs.readFileSync(path.join(PROJECT_ROOT, 'docs/vectors/element-states.v1.json'), 'utf8'),
) as Vectors;

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (isAutoctxError(error)) return error.code;
    throw error;
  }
  return 'no error';
};

describe('element states against the committed vectors (docs/vectors/element-states.v1.json)', () => {
  it('gives every vector component its digest, written as the vector writes it', () => {
    for (const v of vectors.components) {
      const built = createComponent(v.component);
      expect(built.digest).toBe(v.component.digest);
      expect(canonicalJson(built)).toBe(canonicalJson(v.component));
    }
  });

  it('gives every vector bundle its manifest digest, and reads the manifest back', () => {
    for (const b of vectors.bundles) {
      const m = b.manifest;
      const built = createBundle({
        scenario: m.scenario as string,
        evaluator_epoch: m.evaluator_epoch as string,
        parent_digest: m.parent_digest as string | null,
        components: m.components as never,
      });
      expect(built.digest).toBe(m.digest);
      expect(validateBundle(JSON.parse(JSON.stringify(m))).digest).toBe(m.digest);
    }
  });

  it(
    'makes the state part of the identity: one kind, key and media ' +
      'type in four states, four digests, none a present content',
    () => {
      const digests = vectors.components
        .filter((v) => v.component.kind === 'hints' && v.component.key === 'hints')
        .map((v) => v.component.digest);
      expect(new Set(digests).size).toBe(digests.length);
      // The last vector is a present component whose text is the ABSENT marker: another digest.
      expect(vectors.components.at(-1)!.component.state).toBeUndefined();
    },
  );

  it('writes a present component with no state field, so a bundle of present components keeps its digest', () => {
    const a = createComponent({kind: 'hints', key: 'hints', content: 'x', media_type: 'text/markdown'});
    const b = createComponent({
      kind: 'hints',
      key: 'hints',
      content: 'x',
      media_type: 'text/markdown',
      state: 'PRESENT',
    });
    expect(a).toEqual(b);
    expect('state' in b).toBe(false);
  });

  it(
    'refuses a stored "PRESENT", an unknown state, content on a ' +
      'non-present component, and a state edited without its digest',
    () => {
      const m = JSON.parse(JSON.stringify(vectors.bundles[0]!.manifest)) as {components: Array<Record<string, string>>};
      const present = JSON.parse(JSON.stringify(m)) as typeof m;
      present.components.find((c) => c.state === undefined)!.state = 'PRESENT';
      expect(codeOf(() => validateBundle(present))).toBe('SCHEMA_VIOLATION');
      const unknown = JSON.parse(JSON.stringify(m)) as typeof m;
      unknown.components.find((c) => c.state === 'ABSENT')!.state = 'MISSING';
      expect(codeOf(() => validateBundle(unknown))).toBe('SCHEMA_VIOLATION');
      const content = JSON.parse(JSON.stringify(m)) as typeof m;
      content.components.find((c) => c.state === 'ABSENT')!.content = 'text';
      expect(codeOf(() => validateBundle(content))).toBe('SCHEMA_VIOLATION');
      const moved = JSON.parse(JSON.stringify(m)) as typeof m;
      moved.components.find((c) => c.state === 'ABSENT')!.state = 'INCLUDED';
      expect(codeOf(() => validateBundle(moved))).toBe('DIGEST_MISMATCH');
      expect(codeOf(() => createComponent({kind: 'hints', key: 'h', content: 'x', state: 'ABSENT'}))).toBe(
        'SCHEMA_VIOLATION',
      );
    },
  );
});
