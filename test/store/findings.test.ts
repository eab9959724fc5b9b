import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {Findings, type Mark} from '../../src/store/findings.js';
import {RootGuard} from '../../src/store/files/fs.js';
import type {ScenarioStore} from '../../src/store/scenario-store.js';
import {tempDir} from '../helpers/tree.js';

// verify checks candidates out of order (while its helper checks manifests) and the manifests after
// them; Findings puts what each reported back where the one-thread order has it.

const findings = () => new Findings({guard: new RootGuard(tempDir())} as unknown as ScenarioStore);
const report = (c: Findings, tag: string, kinds: string) => {
  for (const k of kinds) {
    if (k === 'e') c.error(`${tag}.json`, 'CORRUPT_FILE', tag);
    if (k === 'w') c.warn(`${tag}.json`, 'MISSING_RECORD', tag);
    if (k === 'n') c.note(`${tag}.json`, 'ELEMENT_STATES', tag);
  }
};
const lists = (c: Findings) => [c.errors, c.warnings, c.notes].map((l) => l.map((x) => x.message));

describe('findings reported out of order', () => {
  it('are arranged in the order of their checks, whatever order they ran in', () => {
    const kinds = fc.array(fc.constantFrom('e', 'w', 'n'), {maxLength: 4}).map((a) => a.join(''));
    fc.assert(
      fc.property(fc.array(kinds, {minLength: 1, maxLength: 8}), fc.nat(), (reports, seed) => {
        const inOrder = findings();
        report(inOrder, 'before', 'ewn');
        reports.forEach((r, i) => report(inOrder, `c${i}`, r));
        // The same checks from the front and the back, as verify takes them.
        const shuffled = findings();
        report(shuffled, 'before', 'ewn');
        const start = shuffled.mark();
        const blocks: Array<[Mark, Mark]> = [];
        let x = seed;
        for (let front = 0, back = reports.length - 1; front <= back; x >>= 1) {
          const i = x & 1 ? back-- : front++;
          const m = shuffled.mark();
          report(shuffled, `c${i}`, reports[i]!);
          blocks[i] = [m, shuffled.mark()];
        }
        shuffled.arrange(start, blocks);
        expect(lists(shuffled)).toEqual(lists(inOrder));
      }),
      {numRuns: 300, seed: 2032},
    );
  });

  it('put what a later check reports before what was reported since a mark', () => {
    const c = findings();
    report(c, 'walk', 'e');
    const mark = c.mark();
    report(c, 'candidate', 'ewn');
    c.reportBefore(mark, () => report(c, 'manifest', 'ewwn'));
    expect(lists(c)).toEqual([
      ['walk', 'manifest', 'candidate'],
      ['manifest', 'manifest', 'candidate'],
      ['manifest', 'candidate'],
    ]);
  });
});
