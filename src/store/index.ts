export {KnowledgeStore, knowledgeRootFrom, GITIGNORE_LINES} from './knowledge.js';
export {ScenarioStore} from './scenario-store.js';
export {readSource, type BundleSource} from './source.js';
export {assertScenarioName, campaignSegment, isSafeSegment, ScenarioPaths} from './paths.js';
export {schemaProblem, assertSchema} from './schemas.js';
export {readFixtures, readInputJson, readInputText, readJsonLines} from './inputs.js';
export {type MatchedEvidence, type StoredCampaign} from './scenario-store.js';
