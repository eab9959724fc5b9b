import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {prettyJson, stableDigest} from '../../src/canonical/index.js';
import {verify} from '../../src/core/common/verify.js';
import {AUDIT, evalArgs, fakeEnv, useTrees, type Tree} from '../helpers/pipeline.js';
import {SAMPLE_KNOWLEDGE} from '../helpers/paths.js';

const tree = useTrees();
const CANDIDATE = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};

/** A candidate confirmed with an audit bound. */
function confirmedWithAudit(t: Tree): string {
  const c = t.propose('cand', CANDIDATE);
  const r = t.cli(['confirm', c, ...evalArgs(['--audit', `node ${AUDIT}`])], {
    ...fakeEnv(t.dir),
    FAKE_AUDIT: 'advisory',
  });
  expect(r.json.status).toBe('confirmed');
  return c;
}

/** The plan keys of a plan the Python implementation wrote (the committed parity tree). */
function upstreamPlanKeys(): string[] {
  const candidates = path.join(SAMPLE_KNOWLEDGE, 'demo/context_bundles/candidates');
  const file = fs
    .readdirSync(candidates)
    .map((d) => path.join(candidates, d, 'evaluator_plan.json'))
    .find((f) => fs.existsSync(f))!;
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  expect(Object.keys(doc).sort()).toEqual(['plan', 'plan_digest']);
  return Object.keys(doc.plan).sort();
}

describe('evaluator_plan.json: the Python implementation plan, and autoctx additions beside it', () => {
  it(
    'plan holds exactly the upstream keys and plan_digest is over them; ' +
      'the additions have a digest of their own, which the seal records',
    () => {
      const t = tree();
      const c = confirmedWithAudit(t);
      const doc = JSON.parse(t.read(`candidates/${c}/evaluator_plan.json`));
      expect(Object.keys(doc).sort()).toEqual(['additions', 'additions_digest', 'plan', 'plan_digest']);
      expect(Object.keys(doc.plan).sort()).toEqual(upstreamPlanKeys());
      expect(doc.plan_digest).toBe(stableDigest(doc.plan));
      expect(doc.additions).toEqual({
        audit: {command: `node ${AUDIT}`},
        campaign_id: null,
        evaluator_files: [{path: 'test/fixtures/evaluators/fake.js', sha256: expect.stringMatching(/^[0-9a-f]{64}$/)}],
      });
      expect(doc.additions_digest).toBe(stableDigest({plan_digest: doc.plan_digest, additions: doc.additions}));
      const seal = JSON.parse(t.read(`candidates/${c}/evidence_seal.json`));
      expect(seal.plan_binding_digest).toBe(doc.additions_digest);
      expect(verify({knowledge: t.knowledge})).toMatchObject({status: 'ok', errors: []});
    },
  );

  it(
    'a plan in the older shape (additions inside the plan, no seal ' +
      'binding) verifies, binds its audit, and is never rewritten',
    () => {
      const t = tree();
      const c = confirmedWithAudit(t);
      const planFile = t.file(`candidates/${c}/evaluator_plan.json`);
      const sealFile = t.file(`candidates/${c}/evidence_seal.json`);
      const doc = JSON.parse(fs.readFileSync(planFile, 'utf8'));
      const oldPlan = {...doc.plan, audit: doc.additions.audit, campaign_id: null};
      fs.writeFileSync(planFile, prettyJson({plan: oldPlan, plan_digest: stableDigest(oldPlan)}));
      const {plan_binding_digest: _binding, ...oldSeal} = JSON.parse(fs.readFileSync(sealFile, 'utf8'));
      fs.writeFileSync(sealFile, prettyJson(oldSeal));
      const bytes = fs.readFileSync(planFile);
      expect(verify({knowledge: t.knowledge})).toMatchObject({status: 'ok', errors: []});
      // The audit bound inside the old plan still holds the promotion.
      const held = t.cli(['promote', c], {FAKE_AUDIT: 'review_required'});
      expect([held.status, held.json.error.code]).toEqual([5, 'AUDIT_HOLD']);
      const other = t.cli(['promote', c, '--audit', 'true']);
      expect([other.status, other.json.error.code]).toEqual([8, 'AUDIT_CHANGED']);
      expect(t.cli(['promote', c], {FAKE_AUDIT: 'advisory'}).json.status).toBe('promoted');
      expect(fs.readFileSync(planFile).equals(bytes)).toBe(true);
      expect(verify({knowledge: t.knowledge})).toMatchObject({status: 'ok', errors: []});
    },
  );

  it(
    'an audit removed from the additions, with every digest of the plan file ' +
      'recomputed, is caught by the seal: verify names both files and promote refuses',
    () => {
      const t = tree();
      const c = confirmedWithAudit(t);
      const planFile = t.file(`candidates/${c}/evaluator_plan.json`);
      const doc = JSON.parse(fs.readFileSync(planFile, 'utf8'));
      const additions = {audit: null, campaign_id: null};
      fs.writeFileSync(
        planFile,
        prettyJson({...doc, additions, additions_digest: stableDigest({plan_digest: doc.plan_digest, additions})}),
      );
      const r = verify({knowledge: t.knowledge});
      expect(r.status).toBe('failed');
      const rel = (name: string) => path.join('demo/context_bundles/candidates', c, name);
      expect(r.errors.map((e) => [e.code, e.file]).sort()).toEqual([
        ['EVIDENCE_SEAL_MISMATCH', rel('evaluator_plan.json')],
        ['EVIDENCE_SEAL_MISMATCH', rel('evidence_seal.json')],
      ]);
      const promote = t.cli(['promote', c], {FAKE_AUDIT: 'review_required'});
      expect([promote.status, promote.json.error.code]).toEqual([8, 'INTEGRITY']);
    },
  );

  it('a hybrid (an addition inside the plan beside additions) or a wrong additions_digest is refused by name', () => {
    const t = tree();
    const c = confirmedWithAudit(t);
    const planFile = t.file(`candidates/${c}/evaluator_plan.json`);
    const doc = JSON.parse(fs.readFileSync(planFile, 'utf8'));
    const hybridPlan = {...doc.plan, audit: null};
    const hybridDigest = stableDigest(hybridPlan);
    fs.writeFileSync(
      planFile,
      prettyJson({
        plan: hybridPlan,
        plan_digest: hybridDigest,
        additions: doc.additions,
        additions_digest: stableDigest({plan_digest: hybridDigest, additions: doc.additions}),
      }),
    );
    expect(
      verify({knowledge: t.knowledge})
        .errors.map((e) => e.message)
        .join('\n'),
    ).toMatch(/plan holds "audit", which belongs in additions/);
    fs.writeFileSync(planFile, prettyJson({...doc, additions_digest: '0'.repeat(64)}));
    expect(
      verify({knowledge: t.knowledge})
        .errors.map((e) => e.message)
        .join('\n'),
    ).toMatch(/additions_digest does not match/);
  });
});
