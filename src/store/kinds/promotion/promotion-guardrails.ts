import type {GuardrailRecord} from '../../../model/promotion/guardrails.js';
import {fail} from '../../../errors.js';
import {readDocument} from '../../documents.js';
import type {KindContext} from '../common/kind-context.js';

/**
 * candidates/<digest>/promotion_guardrails.json: the verdicts of the plan's promotion guardrails, written with the
 * promotion they allowed (an autoctx addition the Python implementation never reads; the promotion record keeps its
 * shape). Immutable: a promote run again after a crash computes the same document. Its contents are checked against
 * the plan, the evidence and trial_observations.json by verify (src/core/promotion/guardrail-gate.ts).
 */
export const GUARDRAILS_SCHEMA = 'promotion-guardrails' as const;

export function readPromotionGuardrails(ctx: KindContext, digest: string): GuardrailRecord | null {
  return readDocument<GuardrailRecord>(ctx.guard, ctx.paths.promotionGuardrails(digest), GUARDRAILS_SCHEMA, (v) => {
    const doc = v as unknown as GuardrailRecord;
    if (doc.candidate_digest !== digest)
      fail('INVALID_INPUT', `the promotion guardrails are for candidate ${doc.candidate_digest}`);
    return doc;
  });
}

/** Under the scenario lock, before the promotion record it belongs to. */
export function writePromotionGuardrails(ctx: KindContext, record: GuardrailRecord): boolean {
  return ctx.writer.createDocument(ctx.paths.promotionGuardrails(record.candidate_digest), GUARDRAILS_SCHEMA, record);
}
