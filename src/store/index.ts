export {KnowledgeStore, knowledgeRootFrom, GITIGNORE_LINES, type UnknownRootEntry} from './knowledge.js';
export {ScenarioStore} from './scenario-store.js';
export type {MatchedEvidence} from './kinds/evaluation/matched-evidence.js';
export type {StoredCampaign} from './kinds/evaluation/campaign-ledger.js';
export type {StoredSeal} from './kinds/evaluation/evidence-seal.js';
export {StateArea, STATE_DIR_MODE, STATE_FILE_MODE} from './state-area.js';
export {componentFileName} from './file-names.js';
export {readSource, type BundleSource} from './io/source.js';
export {
  assertScenarioName,
  campaignSegment,
  isSafeSegment,
  leftoverKind,
  ScenarioPaths,
  RootPaths,
  STATE_DIR_NAME,
  TEAM_CONFIG_NAME,
} from './paths.js';
export {schemaProblem, assertSchema} from './schemas.js';
export {readFixtures, readInputJson, readInputText, readJsonLines} from './io/inputs.js';
export {GITIGNORE_GENERATIONS, type GitignoreState} from './kinds/common/gitignore.js';
export {ledgerDigest} from './kinds/evaluation/campaign-ledger.js';
export {mirrorText, MIRRORED, type MirrorName} from './kinds/promotion/mirrors.js';
export type {TreeEntry} from './files/fs.js';
export {pausePoint} from './files/lock.js';
export {sweepAbandonedEvaluationFolders} from './files/materialize.js';
export {evaluatorFiles} from './io/input-files.js';
export type {RunJournal} from './kinds/evaluation/run-journal.js';
export type {EvaluationDefaults} from './kinds/common/team-config.js';
export {
  hookSettingsFor,
  readUserConfig,
  userConfigPath,
  userConfigText,
  type HookSettings,
  type UserConfig,
} from './io/user-config.js';
