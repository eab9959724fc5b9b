import fs from 'node:fs';
import {describe, expect, it} from '@jest/globals';
import {promote} from '../../src/core/promotion/promote.js';
import {verify} from '../../src/core/common/verify.js';
import {isAutoctxError} from '../../src/errors.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {evalArgs, fakeEnv, useTrees, type Tree} from '../helpers/pipeline.js';

/**
 * promote called as a library (core/promotion), without the CLI: what it
 * writes and in what state it leaves the candidates. Its exit codes and
 * output are tested through the CLI in test/pipeline/promote.test.ts.
 */
const tree = useTrees();
const CANDIDATE = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const confirmed = (t: Tree, name = 'cand', files = CANDIDATE) => {
  const c = t.propose(name, files);
  expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).json.status).toBe('confirmed');
  return c;
};
/** The error a promise is refused with. */
async function refusal(p: Promise<unknown>): Promise<{code: string; message: string}> {
  try {
    await p;
  } catch (error) {
    if (isAutoctxError(error)) return {code: error.code, message: error.message};
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('promote', () => {
  it(
    'writes the promotion record, then the pointer, mirrors and ' +
      'lifecycles; a re-run reports it and writes no second record',
    async () => {
      const t = tree();
      const c = confirmed(t);
      const r = await promote({knowledge: t.knowledge, candidate: c});
      expect(resultSchemaProblem('result-promote', JSON.parse(JSON.stringify(r)))).toBeNull();
      expect(r).toMatchObject({
        status: 'promoted',
        bundle_digest: c,
        incumbent_digest: t.baseline,
        already_promoted: false,
      });
      const active = JSON.parse(t.read('active.json'));
      expect(active).toMatchObject({
        bundle_digest: c,
        promotion_id: r.promotion_id,
        rollback_target_digest: t.baseline,
      });
      const promotion = JSON.parse(t.read(`promotions/${r.promotion_id}.json`));
      expect(promotion).toMatchObject({
        candidate_digest: c,
        cohort: 'cand:epoch-1:generation:0',
        confirmation_policy: {max_confirmation_pairs: 4},
      });
      expect(JSON.parse(t.read(`candidates/${c}/record.json`)).lifecycle).toBe('active');
      expect(JSON.parse(t.read(`candidates/${t.baseline}/record.json`)).lifecycle).toBe('superseded');
      const again = await promote({knowledge: t.knowledge, candidate: c});
      expect(again).toMatchObject({already_promoted: true, promotion_id: r.promotion_id});
      expect(fs.readdirSync(t.file('promotions'))).toHaveLength(1);
      expect(verify({knowledge: t.knowledge}).errors).toEqual([]);
    },
  );

  it(
    'a stale parent after a sibling wins: stale_terminalization.json, ' +
      'a negative result, rejected, ACTIVE_MOVED, pointer untouched',
    async () => {
      const t = tree();
      const a = confirmed(t, 'a');
      const b = confirmed(t, 'b', {
        'playbook/playbook.md': 'Another idea.\n',
        'routing_config/roles.json': '{"model_competitor": "small"}',
      });
      expect((await promote({knowledge: t.knowledge, candidate: a})).status).toBe('promoted');
      const pointer = t.read('active.json');
      const e = await refusal(promote({knowledge: t.knowledge, candidate: b}));
      expect(e.code).toBe('ACTIVE_MOVED');
      expect(e.message).toMatch(/active bundle is/);
      expect(t.read('active.json')).toBe(pointer);
      expect(JSON.parse(t.read(`candidates/${b}/stale_terminalization.json`))).toMatchObject({
        candidate_digest: b,
        observed_active_digest: a,
        parent_digest: t.baseline,
      });
      expect(JSON.parse(t.read(`candidates/${b}/negative_result.json`)).entries[0].result_id).toBe(
        `context-bundle-${b}-stale-incumbent`,
      );
      expect(JSON.parse(t.read(`candidates/${b}/record.json`)).lifecycle).toBe('rejected');
      expect(verify({knowledge: t.knowledge}).errors).toEqual([]);
    },
  );

  it('refuses a candidate that is not confirmed, and writes nothing', async () => {
    const t = tree();
    const c = t.propose('cand', CANDIDATE);
    const pointer = t.read('active.json');
    expect((await refusal(promote({knowledge: t.knowledge, candidate: c}))).code).toBe('NOT_CONFIRMED');
    expect(t.read('active.json')).toBe(pointer);
    expect(fs.existsSync(t.file('promotions'))).toBe(false);
  });
});
