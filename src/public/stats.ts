/**
 * autoctx/stats: the statistics autoctx decides with, as pure functions. Every
 * result is built from correctly rounded operations, so it is the same on
 * every machine and equals the Python reference bit for bit.
 */
export {pairedConfidenceInterval, intervalFromMoments, twoSidedTail, type Interval} from '../stats/interval.js';
export {requiredConfidenceZ} from '../stats/required-z.js';
export {fsum, fmean, ExactSum} from '../stats/exact-sum.js';
export {sampleStdev, ExactMoments} from '../stats/exact-moments.js';
export {studentTSurvival, studentTUpperQuantile, regularizedIncompleteBeta} from '../stats/student-t.js';
export {BettingTest, bettingTestRejects} from '../stats/betting.js';
export {exp} from '../stats/special/exp.js';
export {log} from '../stats/special/log.js';
export {log1p} from '../stats/special/log1p.js';
export {erfc} from '../stats/special/erfc.js';
export {lgamma} from '../stats/special/lgamma.js';
export {
  campaignAlphaForCandidate,
  campaignBoundClears,
  confirmationBlocksReady,
  evaluateCampaignEvidence,
} from '../model/evaluation/campaign.js';
export {evaluateMatchedTrials} from '../model/evaluation/comparison.js';
