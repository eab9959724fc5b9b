/**
 * Where everything lives under the knowledge root, one module per job in
 * store/layout: the rules for names that become path segments, the paths of
 * one scenario's store, the names autoctx leaves behind transiently, and the
 * paths at the root. Nothing else builds paths under the knowledge root.
 */
export {
  assertScenarioName,
  campaignSegment,
  isSafeSegment,
  isScenarioName,
  ledgerSegment,
  scenarioNameProblem,
} from './layout/segments.js';
export {ScenarioPaths} from './layout/scenario-paths.js';
export {
  isOwnNegativeLedgerName,
  leftoverKind,
  LOCK_NAME,
  STALE_LOCK_NAME,
  TEMP_FILE,
  tempPath,
} from './layout/leftover-names.js';
export {RootPaths, STATE_DIR_NAME, TEAM_CONFIG_NAME} from './layout/root-paths.js';
