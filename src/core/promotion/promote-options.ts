import type {GuardrailVerdict} from '../../model/promotion/guardrails.js';
import type {StoreOptions} from '../common/store-options.js';

/** What promote is asked and what it answers. */

export interface PromoteOptions extends StoreOptions {
  candidate: string;
  rationale?: string | undefined;
  /** Who promotes (recorded on what the promotion ends); in a signed tree the key must sign as it. */
  actor?: string | undefined;
  audit?: string | undefined;
  timeoutSeconds?: number | undefined;
}

export interface PromoteResult {
  status: 'promoted' | 'rejected';
  reason: string | null;
  scenario: string;
  bundle_digest: string;
  incumbent_digest: string;
  promotion_id: string | null;
  already_promoted: boolean;
  causal_attribution: boolean;
  /** The promotion guardrails' verdicts (when the plan binds any), as recorded in promotion_guardrails.json. */
  guardrails?: GuardrailVerdict[];
}
