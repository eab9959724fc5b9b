import {compareUtf16, stableDigest} from '../../canonical/index.js';
import {fmean} from '../../stats/exact-sum.js';
import type {ContextBundle} from '../bundle/bundle.js';
import type {ManifestDiff} from '../bundle/diff.js';
import type {MatchedTrial} from './trial.js';

const NEUTRAL_EFFECT = 0.0;
const HIGH_TOKEN_COST = 256;

/** Round to six decimals, ties away from zero (the reference's attribution rounding). */
function roundSix(value: number): number {
  const scaled = Math.abs(value) * 1_000_000;
  if (!Number.isFinite(scaled)) return value;
  const rounded = Math.floor(scaled + 0.5) / 1_000_000;
  const result = value < 0 ? -rounded : rounded;
  return result === 0 ? 0 : result;
}

function confidenceOf(effects: number[]): number {
  if (effects.length === 0) return 0;
  const nonzero = effects.filter((e) => e !== 0);
  let agreement = 1;
  if (nonzero.length) {
    const positive = nonzero.filter((e) => e > 0).length;
    agreement = Math.max(positive, nonzero.length - positive) / nonzero.length;
  }
  return roundSix(Math.min(1, effects.length / 4) * agreement);
}

function classify(effect: number, tokenCost: number): string {
  if (effect < -NEUTRAL_EFFECT) return 'harmful';
  if (effect > NEUTRAL_EFFECT) return 'retained';
  if (tokenCost >= HIGH_TOKEN_COST) return 'demotion_candidate';
  return 'uncertain';
}

const sortUtf16 = (values: string[]) => [...values].sort(compareUtf16);

/**
 * causal_attribution.json for a promoted exact single-component addition:
 * only when the diff has exactly one change, that change adds a component
 * (absent from the comparison bundle), and there is at least one held-out
 * pair. Held-out pairs become controlled with/without trials. Returns null
 * when no causal claim may be made (replacements, multi-component edits).
 */
export function createCausalAttribution(
  tested: ContextBundle,
  comparison: ContextBundle,
  diff: ManifestDiff,
  trials: readonly MatchedTrial[],
): Record<string, unknown> | null {
  if (diff.changes.length !== 1) return null;
  const change = diff.changes[0]!;
  if (change.tested_component_digest === null || change.comparison_component_digest !== null) return null;
  const heldout = trials.filter((t) => t.lane === 'heldout');
  if (heldout.length === 0) return null;
  const component = tested.components.find((c) => c.kind === change.component_kind && c.key === change.component_key)!;
  const tokenCost = Buffer.byteLength(component.content, 'utf8');
  const testedAt = `evaluator:${tested.evaluator_epoch}`;
  const source = heldout.map((t) => ({
    comparison_bundle_digest: comparison.digest,
    component_digest: component.digest,
    component_key: component.key,
    component_kind: component.kind,
    evaluator_epoch: tested.evaluator_epoch,
    evidence_level: 'causal_ablation',
    fixture_digest: t.fixture_digest,
    interaction_component_digests: [] as string[],
    seed: t.seed,
    tested_at: testedAt,
    tested_bundle_digest: tested.digest,
    token_cost: tokenCost,
    trial_cohort: t.cohort,
    trial_id: t.pair_key,
    with_component_score: t.candidate_score,
    without_component_score: t.incumbent_score,
  }));
  const cohort = heldout[0]!.cohort;
  const pairKey = (s: (typeof source)[number]) =>
    stableDigest({
      component_kind: s.component_kind,
      component_key: s.component_key,
      component_digest: s.component_digest,
      tested_bundle_digest: s.tested_bundle_digest,
      comparison_bundle_digest: s.comparison_bundle_digest,
      evaluator_epoch: s.evaluator_epoch,
      trial_cohort: s.trial_cohort,
      fixture_digest: s.fixture_digest,
      seed: s.seed,
    });
  const trialIds = sortUtf16(source.map((s) => s.trial_id));
  const matchedPairKeys = sortUtf16(source.map(pairKey));
  const sourceDigests = sortUtf16(source.map((s) => stableDigest(s)));
  const effects = source.map((s) => s.with_component_score - s.without_component_score);
  const effect = roundSix(fmean(effects));
  const identity = {
    component_kind: component.kind,
    component_key: component.key,
    component_digest: component.digest,
    tested_bundle_digest: tested.digest,
    comparison_bundle_digest: comparison.digest,
    evaluator_epoch: tested.evaluator_epoch,
    trial_cohort: cohort,
    evidence_level: 'causal_ablation',
    classification_neutral_effect: NEUTRAL_EFFECT,
    classification_high_token_cost: HIGH_TOKEN_COST,
    trial_ids: trialIds,
    matched_pair_keys: matchedPairKeys,
    source_trial_digests: sourceDigests,
  };
  const attribution = {
    attribution_id: stableDigest(identity),
    classification_high_token_cost: HIGH_TOKEN_COST,
    classification_neutral_effect: NEUTRAL_EFFECT,
    comparison_bundle_digest: comparison.digest,
    component_digest: component.digest,
    component_key: component.key,
    component_kind: component.kind,
    confidence: confidenceOf(effects),
    disposition: classify(effect, tokenCost),
    effect,
    evaluator_epoch: tested.evaluator_epoch,
    evidence_level: 'causal_ablation',
    interaction_component_digests: [],
    last_tested_bundle_digest: tested.digest,
    legacy_unverified: false,
    matched_pair_keys: matchedPairKeys,
    source_trial_digests: sourceDigests,
    supersedes_attribution_id: null,
    tested_at: testedAt,
    token_cost: tokenCost,
    trial_cohort: cohort,
    trial_ids: trialIds,
  };
  return {
    schema_version: 1,
    candidate_digest: tested.digest,
    comparison_digest: comparison.digest,
    manifest_diff: diff,
    source_trials: source,
    attributions: [{attribution, manifest_diff_digest: diff.digest, trial_ids: trialIds}],
  };
}
