import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {
  bucketOf,
  bucketText,
  decideRoute,
  type RouteRequest,
  type RouteSnapshot,
} from '../../src/model/release/routing.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {canonicalJson} from '../../src/canonical/index.js';

interface Vectors {
  buckets: Array<{algorithm: string; parts: string[]; hashed_text: string; bucket: number}>;
  decisions: Array<{snapshot: RouteSnapshot; request: RouteRequest; decision: unknown}>;
}
const vectors = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'docs/vectors/routing.v1.json'), 'utf8')) as Vectors;

const snapshot = (basisPoints: number | null, salt = 'v2'): RouteSnapshot => ({
  scenario: 'demo',
  scope: 'global',
  active: {version: 'v1', bundle_digest: 'a'.repeat(64), source: 'global'},
  canaries: [
    {
      version: 'v2',
      bundle_digest: 'b'.repeat(64),
      basis_points: basisPoints,
      tenants: [],
      resource_families: [],
      salt,
      runnable: true,
    },
  ],
  registry_problem: null,
});

describe('routing against the committed vectors (docs/vectors/routing.v1.json, computed in Python)', () => {
  it("hashes every vector's text to its bucket", () => {
    for (const v of vectors.buckets) {
      expect(bucketText(v.algorithm, v.parts)).toBe(v.hashed_text);
      expect(bucketOf(v.algorithm, v.parts)).toBe(v.bucket);
    }
  });

  it("makes every vector's decision", () => {
    for (const v of vectors.decisions) expect(decideRoute(v.snapshot, v.request)).toEqual(v.decision);
    // The vectors hold every reason but one that needs a broken tree (they do hold that too).
    expect(new Set(vectors.decisions.map((v) => (v.decision as {reason: string}).reason))).toEqual(
      new Set([
        'canary',
        'outside_share',
        'no_requester',
        'tenant_filtered',
        'resource_filtered',
        'not_runnable',
        'registry_integrity',
      ]),
    );
  });
});

describe('the bucket text', () => {
  it('is canonical JSON of the array, for any strings (property), and refuses a lone surrogate', () => {
    fc.assert(
      fc.property(fc.array(fc.string({unit: 'grapheme'}), {maxLength: 6}), (parts) =>
        expect(bucketText('a', parts)).toBe(canonicalJson(['a', ...parts])),
      ),
      {numRuns: 2000},
    );
    fc.assert(
      fc.property(fc.array(fc.string({unit: 'binary'}), {maxLength: 6}), (parts) => {
        if (parts.every((p) => p.isWellFormed())) expect(bucketText('a', parts)).toBe(canonicalJson(['a', ...parts]));
        else expect(() => bucketText('a', parts)).toThrow();
      }),
      {numRuns: 2000},
    );
  });
});

describe('canary membership', () => {
  it('takes the user, else the session, else the event, and puts a request with none outside', () => {
    const s = snapshot(null);
    expect(decideRoute(s, {user: 'u', session: 's', event: 'e'}).requester).toBe('user');
    expect(decideRoute(s, {session: 's', event: 'e'}).requester).toBe('session');
    expect(decideRoute(s, {event: 'e'}).requester).toBe('event');
    expect(decideRoute(s, {})).toMatchObject({state: 'ACTIVE', reason: 'no_requester', requester: null});
  });

  it('never drops a requester who was in when the share rises (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({min: 0, max: 10000}), fc.integer({min: 0, max: 10000}), (user, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        if (decideRoute(snapshot(lo), {user}).state === 'CANARY')
          expect(decideRoute(snapshot(hi), {user}).state).toBe('CANARY');
      }),
      {numRuns: 2000},
    );
  });

  it(
    'at 100,000 requesters, holds the share within 1 percentage ' +
      'point; two 50% cohorts of different releases overlap 25% ± 1',
    () => {
      const n = 100_000;
      let inTen = 0;
      let inA = 0;
      let inBoth = 0;
      for (let i = 0; i < n; i++) {
        const user = `user-${i}@example.test`;
        if (decideRoute(snapshot(1000), {user}).state === 'CANARY') inTen++;
        const a = decideRoute(snapshot(5000, 'v2'), {user}).state === 'CANARY';
        const b = decideRoute(snapshot(5000, 'v3'), {user}).state === 'CANARY';
        if (a) inA++;
        if (a && b) inBoth++;
      }
      expect(Math.abs((inTen / n) * 100 - 10)).toBeLessThanOrEqual(1);
      expect(Math.abs((inA / n) * 100 - 50)).toBeLessThanOrEqual(1);
      expect(Math.abs((inBoth / n) * 100 - 25)).toBeLessThanOrEqual(1);
      // The same salt keeps the cohort: a new release given the old one's salt has exactly the old cohort.
      for (let i = 0; i < 1000; i++)
        expect(decideRoute(snapshot(5000, 'v2'), {user: `u${i}`}).state).toBe(
          decideRoute(
            {...snapshot(5000, 'v2'), canaries: [{...snapshot(5000, 'v2').canaries[0]!, version: 'v3'}]},
            {user: `u${i}`},
          ).state,
        );
    },
  );
});
