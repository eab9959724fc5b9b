import {describe, expect, it} from '@jest/globals';
import {DOCUMENT_KINDS, documentSchemas} from '../helpers/kind-trees.js';

describe('the whole-tree suites know every document kind', () => {
  it(
    'every document schema in schemas/ is listed in test/helpers/kind-trees.ts, ' +
      'with where its files live or why no committed tree holds one',
    () => {
      // A new kind fails here until it is listed; listed with a pattern, the deletion and tamper suites then fail until
      // their trees hold one.
      expect(documentSchemas().filter((s) => !(s in DOCUMENT_KINDS))).toEqual([]);
      expect(Object.keys(DOCUMENT_KINDS).filter((k) => !documentSchemas().includes(k))).toEqual([]);
    },
  );
});
