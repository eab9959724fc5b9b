/**
 * autoctx/context-bundles: the pure bundle, diff, trial, policy, decision and
 * campaign functions, the surface of the reference's TypeScript module, for
 * people who embed autoctx. No file is read or written here.
 */
import {createBundle, validateBundle, type BundleInput, type ContextBundle} from '../model/bundle/bundle.js';
import {createComponent, createJsonComponent} from '../model/bundle/component.js';
import {manifestDiff} from '../model/bundle/diff.js';
import {evaluateCampaignEvidence} from '../model/evaluation/campaign.js';

export const CONTEXT_BUNDLE_SCHEMA_VERSION = 1;
export {canonicalJson, stableDigest, compareUtf16 as utf16Compare} from '../canonical/index.js';
export {COMPONENT_KINDS, type ComponentKind} from '../model/bundle/kinds.js';
export {
  LIFECYCLES,
  TRANSITIONS,
  canTransition,
  type Lifecycle as BundleLifecycle,
} from '../model/promotion/lifecycle.js';
export type {BundleComponent} from '../model/bundle/component.js';
export type {ContextBundle, BundleInput} from '../model/bundle/bundle.js';
export type {
  ManifestChange as BundleManifestChange,
  ManifestDiff as ContextBundleManifestDiff,
} from '../model/bundle/diff.js';
export {
  TRIAL_LANES,
  createMatchedTrial,
  matchedTrialFromDict,
  matchedTrialPairKey,
  legacyPairKey,
  type MatchedTrial,
  type TrialLane,
} from '../model/evaluation/trial.js';
export {
  DEFAULT_CONFIRMATION_POLICY,
  confirmationPolicyDigest,
  validateConfirmationPolicy,
  type ConfirmationPolicy,
} from '../model/evaluation/policy.js';
export type {ComparisonResult} from '../model/promotion/records.js';
export {evaluateMatchedTrials, type ComparisonSubject} from '../model/evaluation/comparison.js';
export {
  DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY,
  ROBUST_METHODS,
  authorizeCampaignPromotion,
  campaignAdjustedConfirmationPolicy,
  campaignAlphaForCandidate,
  campaignFutile,
  confirmationBlocksReady,
  createCampaignFalsePromotionState,
  createCandidateFixtureReservation,
  createCandidateRiskReservation,
  requiredConfidenceZ,
  riskEvidenceDigest,
  validateCampaignPolicy,
  type CampaignEvidenceResult as CampaignFalsePromotionEvidenceResult,
  type CampaignFalsePromotionPolicy,
  type CampaignFalsePromotionState,
  type CampaignFixtureUnit,
  type CandidateFixtureReservation,
  type CandidateRiskReservation,
  type FalsePromotionStatus,
  type RobustMethod,
} from '../model/evaluation/campaign.js';
export {checkServeable} from '../model/bundle/serveability.js';

/** A component; the digest is computed. */
export const createBundleComponent = createComponent;
/** A JSON-valued component: content is the canonical JSON of the value. */
export const createJsonBundleComponent = createJsonComponent;
/** A bundle from components in any order. */
export const createContextBundle = (input: BundleInput): ContextBundle => createBundle(input);
/** Load a serialized manifest strictly, checking every digest. */
export const validateContextBundle = validateBundle;
/** The manifest diff of `tested` against `comparison`. */
export const contextBundleManifestDiff = manifestDiff;
/** The dependence-aware campaign evidence gate. */
export const evaluateCampaignFalsePromotionEvidence = evaluateCampaignEvidence;
