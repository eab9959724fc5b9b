import {describe, expect, it} from '@jest/globals';
import {rejectionReason} from '../../src/model/promotion/rejected.js';

/**
 * The one definition of "rejected", from the three facts every reader and verify read: the record, a negative result, a
 * stale rejection.
 */
describe('rejectionReason', () => {
  const d = 'ab'.repeat(32);
  it.each([
    [{lifecycle: 'rejected', hasNegativeResult: false, hasStaleRejection: false}, `candidate ${d} is rejected`],
    [{lifecycle: 'rejected', hasNegativeResult: true, hasStaleRejection: true}, `candidate ${d} is rejected`],
    [
      {lifecycle: 'confirmed', hasNegativeResult: true, hasStaleRejection: false},
      `candidate ${d} has a negative result`,
    ],
    [{lifecycle: null, hasNegativeResult: true, hasStaleRejection: false}, `candidate ${d} has a negative result`],
    [
      {lifecycle: 'confirmed', hasNegativeResult: false, hasStaleRejection: true},
      `candidate ${d} was rejected as stale`,
    ],
    [{lifecycle: 'active', hasNegativeResult: false, hasStaleRejection: false}, null],
    [{lifecycle: null, hasNegativeResult: false, hasStaleRejection: false}, null],
  ])('%j → %s', (facts, reason) => {
    expect(rejectionReason(d, facts)).toBe(reason);
  });
});
