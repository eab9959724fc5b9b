/** The release use cases, one module per verb: name, list/show/history, transition, runnable. */
export {releaseName, type NameOptions, type NameResult} from './release-name.js';
export {
  releaseHistory,
  releaseList,
  releaseScopes,
  releaseShow,
  releaseStatus,
  type HistoryResult,
  type ListResult,
  type ReleaseEntry,
  type ScopeSummary,
  type ShowResult,
} from './release-query.js';
export {releaseTransition, type TransitionOptions, type TransitionResult} from './release-transition.js';
export {releaseRunnable, type RunnableOptions, type RunnableResult} from './release-runnable.js';
export {nextReceipt, readRelease, scopeActive, scopeView, stateIn, type ScopeView} from './registry-view.js';
