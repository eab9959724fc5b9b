import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {type StepOutput, verify, type VerifySteps} from '../../src/core/common/verify.js';
import {CANDIDATE_CHECKS, SCENARIO_CHECKS, START_CHECKS} from '../../src/core/common/kind-steps.generated.js';
import {copyRichKnowledge, removeTempDirs} from '../helpers/tree.js';

afterAll(removeTempDirs);

/**
 * verify's steps (VerifySteps: each check kind-steps.generated.ts lists, a
 * candidate's once per candidate), which the tamper sweep uses to run again
 * only what a flipped file can change: a caller that runs every step gets
 * what verify gives without one, each step once and in the generated order; a
 * step the caller answers is not run, and its answer is taken as the step's
 * own (its facts and findings).
 */
const at = new Date('2026-01-01T00:00:00Z');
const now = () => at;

/** Steps that run each step and note its name. */
function noting(names: string[]): VerifySteps {
  return {
    run(name, _inputs, step) {
      names.push(name);
      return step();
    },
  };
}

/** Change the active bundle digest of `scenario` (verify reports it against active.json). */
function tamperActive(knowledge: string, scenario: string): void {
  const file = path.join(knowledge, scenario, 'context_bundles/active.json');
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(
    file,
    text.replace(/"bundle_digest": "(.)/, (_m, c: string) => `"bundle_digest": "${c === 'a' ? 'b' : 'a'}`),
  );
}

describe("verify's steps", () => {
  it(
    'run by the caller, give the result verify gives by itself, ' +
      'clean and with findings, each step once, in the generated order',
    () => {
      const knowledge = copyRichKnowledge();
      for (const label of ['clean', 'tampered']) {
        if (label === 'tampered') tamperActive(knowledge, 'campaign');
        const names: string[] = [];
        const stepped = verify({knowledge, now, steps: noting(names)});
        expect([label, stepped]).toEqual([label, verify({knowledge, now})]);
        if (label === 'tampered') expect(stepped.status).toBe('failed');
        expect(new Set(names).size).toBe(names.length);
        // In each scenario: the start checks, each candidate's checks in their order, then the scenario's.
        const ofCampaign = names.filter((n) => n.startsWith('campaign: ')).map((n) => n.slice('campaign: '.length));
        const candidates = [
          ...new Set(ofCampaign.filter((n) => n.startsWith('candidate ')).map((n) => n.split(' ')[1])),
        ];
        expect(candidates.length).toBeGreaterThan(1);
        const inOrder = (n: string) => n.replace(/^candidate [0-9a-f]{64} /, 'candidate ');
        const candidateSteps = ofCampaign.filter((n) => n.startsWith('candidate ')).map(inOrder);
        expect([
          ...ofCampaign.filter((n) => n.startsWith('start ')),
          ...candidateSteps,
          ...ofCampaign.filter((n) => n.startsWith('scenario ')),
        ]).toEqual(ofCampaign.map(inOrder));
        expect(ofCampaign.filter((n) => n.startsWith('start '))).toEqual(START_CHECKS.map((s) => `start ${s.order}`));
        expect(candidateSteps).toEqual(candidates.flatMap(() => CANDIDATE_CHECKS.map((s) => `candidate ${s.order}`)));
        expect(ofCampaign.filter((n) => n.startsWith('scenario '))).toEqual(
          SCENARIO_CHECKS.map((s) => `scenario ${s.order}`),
        );
      }
    },
  );

  it("a step the caller answers is not run: its findings are the caller's (none)", () => {
    const knowledge = copyRichKnowledge();
    tamperActive(knowledge, 'campaign');
    const whole = verify({knowledge, now});
    const isActive = (e: {file: string}) => e.file === 'campaign/context_bundles/active.json';
    expect(whole.errors.filter(isActive).length).toBeGreaterThan(0);
    // Every step that reported against active.json answers as if it found nothing: no error names it any more.
    const reporting = new Set<string>();
    verify({
      knowledge,
      now,
      steps: {
        run(name, _inputs, step) {
          const out = step();
          if (out.errors.some(isActive)) reporting.add(name);
          return out;
        },
      },
    });
    expect(reporting.size).toBeGreaterThan(0);
    const nothing: StepOutput = {facts: {}, errors: [], warnings: [], notes: []};
    const skipped = verify({
      knowledge,
      now,
      steps: {run: (name, _inputs, step) => (reporting.has(name) ? nothing : step())},
    });
    expect(skipped.errors.filter(isActive)).toEqual([]);
    expect(skipped.errors).toEqual(whole.errors.filter((e) => !isActive(e)));
  });

  it(
    'a caller that answers every step with what it handed on in ' +
      "an earlier run gets that run's findings, in their order",
    () => {
      const knowledge = copyRichKnowledge();
      tamperActive(knowledge, 'campaign');
      tamperActive(knowledge, 'rolled');
      const kept = new Map<string, StepOutput>();
      const first = verify({
        knowledge,
        now,
        steps: {
          run(name, _inputs, step) {
            const out = step();
            kept.set(name, out);
            return out;
          },
        },
      });
      expect(first.status).toBe('failed');
      expect(kept.size).toBeGreaterThan(0);
      let ran = 0;
      const answered = verify({
        knowledge,
        now,
        steps: {
          run(name, _inputs, step) {
            const out = kept.get(name);
            if (out !== undefined) return out;
            ran++;
            return step();
          },
        },
      });
      expect(ran).toBe(0);
      const findings = (r: typeof first) => ({
        status: r.status,
        errors: r.errors,
        warnings: r.warnings,
        notes: r.notes,
        chain_heads: r.chain_heads,
      });
      expect(findings(answered)).toEqual(findings(first));
    },
  );
});
