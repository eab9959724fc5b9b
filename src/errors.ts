/**
 * Every error autoctx raises on purpose: a stable code, the exit code it maps to, a one-line message and optional
 * structured data. The code → exit-code table is the single source of truth for the CLI and the README.
 */

/** Exit codes, as documented in the README. */
export const EXIT = {
  OK: 0,
  INTERNAL: 1,
  BAD_INPUT: 2,
  REJECTED: 3,
  NEEDS_MORE_EVIDENCE: 4,
  AUDIT_HOLD: 5,
  /** Any lost compare-and-swap: the active pointer (and later the registry or a receipt) moved. */
  CAS_LOST: 6,
  LOCKED: 7,
  INTEGRITY: 8,
  /** The environment refused: no space, read-only file system, permission denied, too many open files. */
  ENVIRONMENT: 9,
  INTERRUPTED: 130, // Ctrl-C (SIGINT) during screen or confirm, 128 + 2; TERMINATED: SIGTERM, 128 + 15
  TERMINATED: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Stable error codes. Never rename one: scripts match on them. */
export const ERROR_CODES = {
  INTERNAL: EXIT.INTERNAL,
  USAGE: EXIT.BAD_INPUT,
  UNKNOWN_COMMAND: EXIT.BAD_INPUT,
  INVALID_INPUT: EXIT.BAD_INPUT,
  CONFIG_INVALID: EXIT.BAD_INPUT,
  INPUT_NOT_FOUND: EXIT.BAD_INPUT,
  /** `verify --extends`: git could not be run, or the knowledge root is not in a git repository. */
  GIT_UNAVAILABLE: EXIT.BAD_INPUT,
  /** `reconcile`: git is not merging, HEAD is no merge commit, or the two sides have no common commit. */
  NOT_A_MERGE: EXIT.BAD_INPUT,
  INPUT_UNSAFE: EXIT.BAD_INPUT,
  INPUT_TOO_LARGE: EXIT.BAD_INPUT,
  TARGET_UNSAFE: EXIT.BAD_INPUT,
  KEY_TOO_LONG: EXIT.BAD_INPUT,
  PLAN_TOO_LARGE: EXIT.BAD_INPUT,
  INVALID_JSON: EXIT.BAD_INPUT,
  /** JSON naming one key twice in an object (never canonical; a stored document: CORRUPT_FILE with this reason). */
  DUPLICATE_KEY: EXIT.BAD_INPUT,
  SCHEMA_VIOLATION: EXIT.BAD_INPUT,
  DIGEST_MISMATCH: EXIT.BAD_INPUT,
  UNSAFE_INTEGER: EXIT.BAD_INPUT,
  NON_FINITE_NUMBER: EXIT.BAD_INPUT,
  LONE_SURROGATE: EXIT.BAD_INPUT,
  NESTING_TOO_DEEP: EXIT.BAD_INPUT,
  INVALID_UTF8: EXIT.BAD_INPUT,
  INVALID_NAME: EXIT.BAD_INPUT,
  UNKNOWN_KIND: EXIT.BAD_INPUT,
  DUPLICATE_COMPONENT: EXIT.BAD_INPUT,
  UNSORTED_COMPONENTS: EXIT.BAD_INPUT,
  SCENARIO_NOT_FOUND: EXIT.BAD_INPUT,
  SCENARIO_REQUIRED: EXIT.BAD_INPUT,
  KNOWLEDGE_NOT_FOUND: EXIT.BAD_INPUT,
  ALREADY_INITIALIZED: EXIT.BAD_INPUT,
  NOT_INITIALIZED: EXIT.BAD_INPUT,
  DIGEST_NOT_FOUND: EXIT.BAD_INPUT,
  AMBIGUOUS_DIGEST: EXIT.BAD_INPUT,
  INVALID_DIGEST: EXIT.BAD_INPUT,
  LINEAGE_MISMATCH: EXIT.BAD_INPUT,
  CANDIDATE_EXISTS: EXIT.BAD_INPUT,
  /** A proposal whose components are exactly the active bundle's (propose --allow-unchanged takes it anyway). */
  CANDIDATE_UNCHANGED: EXIT.BAD_INPUT,
  INVALID_TRANSITION: EXIT.BAD_INPUT,
  NOT_SERVEABLE: EXIT.BAD_INPUT,
  TARGET_EXISTS: EXIT.BAD_INPUT,
  POLICY_MISMATCH: EXIT.BAD_INPUT,
  PLAN_UNREACHABLE: EXIT.BAD_INPUT,
  NOT_CONFIRMED: EXIT.BAD_INPUT,
  CAMPAIGN_POLICY_MISMATCH: EXIT.BAD_INPUT,
  CAMPAIGN_FIXTURE_REUSE: EXIT.BAD_INPUT,
  CAMPAIGN_NOT_FOUND: EXIT.BAD_INPUT,
  INGEST_CONFLICT: EXIT.BAD_INPUT,
  TAG_LIMIT: EXIT.BAD_INPUT,
  COMPONENT_NOT_FOUND: EXIT.BAD_INPUT,
  HANDOFF_NOT_FOUND: EXIT.BAD_INPUT,
  RECEIPT_NOT_FOUND: EXIT.BAD_INPUT,
  BOOTSTRAP_REQUEST_MISMATCH: EXIT.BAD_INPUT,
  RECEIPT_ALREADY_CLAIMED: EXIT.CAS_LOST,
  VERSION_EXISTS: EXIT.BAD_INPUT,
  VERSION_NOT_FOUND: EXIT.BAD_INPUT,
  DIGEST_ALREADY_NAMED: EXIT.BAD_INPUT,
  ROLLBACK_TARGET_NOT_SERVED: EXIT.BAD_INPUT,
  STALE_REGISTRY: EXIT.CAS_LOST,
  UNKNOWN_EXECUTION: EXIT.BAD_INPUT,
  SIGNING_KEY_ENCRYPTED: EXIT.BAD_INPUT,
  SIGNING_KEY_UNAVAILABLE: EXIT.BAD_INPUT,
  SIGNING_KEY_REQUIRED: EXIT.BAD_INPUT,
  SIGNER_NOT_ACTOR: EXIT.BAD_INPUT,
  SIGNING_FAILED: EXIT.ENVIRONMENT,
  /** A reader of what serves, in a signed tree, found serving state no signed change wrote. */
  UNSIGNED_POINTER_MOVE: EXIT.INTEGRITY,
  NOT_AWAITING_APPROVAL: EXIT.REJECTED,
  ALREADY_APPROVED: EXIT.REJECTED,
  APPROVER_MUST_DIFFER: EXIT.REJECTED,
  APPROVAL_EXPIRED: EXIT.REJECTED,
  /** promote: a guardrail of the plan failed, or a metric it needs is missing for a pair (it fails closed). */
  GUARDRAIL_FAILED: EXIT.REJECTED,
  GUARDRAIL_UNMEASURED: EXIT.REJECTED,
  AUDIT_HOLD: EXIT.AUDIT_HOLD,
  ACTIVE_MOVED: EXIT.CAS_LOST,
  CAS_LOST: EXIT.CAS_LOST,
  LOCKED: EXIT.LOCKED,
  LOCK_LOST: EXIT.LOCKED,
  CORRUPT_FILE: EXIT.INTEGRITY,
  /** A file autoctx reads was checked out with converted line endings (git's core.autocrlf). */
  LINE_ENDINGS: EXIT.INTEGRITY,
  /** A file autoctx reads holds git's conflict markers: a merge left unfinished. */
  MERGE_CONFLICT: EXIT.INTEGRITY,
  IMMUTABLE_CONFLICT: EXIT.INTEGRITY,
  UNSAFE_PATH: EXIT.INTEGRITY,
  INTEGRITY: EXIT.INTEGRITY,
  PLAN_CHANGED: EXIT.INTEGRITY,
  EVALUATOR_CHANGED: EXIT.INTEGRITY,
  AUDIT_CHANGED: EXIT.INTEGRITY,
  EVALUATOR_FAILED: EXIT.INTEGRITY,
  REPLAY_MISMATCH: EXIT.INTEGRITY,
  CAMPAIGN_LEGACY: EXIT.INTEGRITY,
  /** Two clones' histories were merged into a state no single clone writes: never repair (DIVERGED_WAY_OUT). */
  DIVERGED: EXIT.INTEGRITY,
  /** `reconcile`: the tree its replay made does not verify; nothing was written to the knowledge root. */
  RECONCILE_FAILED: EXIT.INTEGRITY,
  NO_SPACE: EXIT.ENVIRONMENT,
  READ_ONLY_FS: EXIT.ENVIRONMENT,
  PERMISSION_DENIED: EXIT.ENVIRONMENT,
  TOO_MANY_OPEN_FILES: EXIT.ENVIRONMENT,
  INTERRUPTED: EXIT.INTERRUPTED, // a run stopped by Ctrl-C (TERMINATED: SIGTERM): what it recorded is kept
  TERMINATED: EXIT.TERMINATED,
  // Raised by bin/run.js itself, which cannot read this table when dist/ is missing.
  NOT_BUILT: EXIT.ENVIRONMENT,
} as const satisfies Record<string, ExitCode>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * What `autoctx verify` reports, besides the error codes above (a file that cannot be read is reported with the code
 * its reader raised). "error" findings make verify exit 8; "warning" findings name a state that an interrupted run
 * leaves and the same command run again, or `autoctx repair`, completes.
 */
export const VERIFY_FINDINGS = {
  DIGEST_MISMATCH: 'error',
  DUPLICATE_PAIR: 'error',
  EVIDENCE_SEAL_MISMATCH: 'error',
  GITIGNORE_INCOMPLETE: 'error',
  GITATTRIBUTES_MODIFIED: 'error',
  UNKNOWN_ENTRY: 'error',
  LEDGER_MISMATCH: 'error',
  LINEAGE_MISMATCH: 'error',
  MIRROR_MISMATCH: 'error',
  MISSING_BUNDLE: 'error',
  MISSING_PLAN: 'error',
  MISSING_EVIDENCE: 'error',
  MISSING_SEAL: 'error',
  MISSING_DIFF: 'error',
  MISSING_CANDIDATE: 'error',
  MISSING_MARKER: 'error',
  UNSEALED_DECISION: 'error',
  POINTER_NOT_RECORDED: 'error',
  HISTORY_GAP: 'error',
  /** `verify --extends REV`: a file REV holds that autoctx never rewrites was deleted or changed. */
  HISTORY_REWRITTEN: 'error',
  ROLLBACK_NOT_SERVED: 'error',
  LIFECYCLE_MISMATCH: 'error',
  NEGATIVE_RESULT_MISMATCH: 'error',
  MISSING_CAMPAIGN: 'error',
  MISSING_ARTIFACT: 'error',
  TRIAL_NOT_PLANNED: 'error',
  MISSING_POINTER: 'error',
  MISSING_PROMOTION: 'error',
  REPLAY_MISMATCH: 'error',
  RUNTIME_MISMATCH: 'error',
  PLAN_HISTORY_MISMATCH: 'error',
  RECORD_HISTORY_MISMATCH: 'error',
  MISSING_RECORD_HISTORY: 'error',
  SUPERSEDED_PLAN: 'error',
  MISSING_CURATION: 'error',
  CURATION_MISMATCH: 'error',
  /** A reconcile record names a file its replay wrote that is not there. */
  RECONCILE_MISMATCH: 'error',
  TAG_UNKNOWN_COMPONENT: 'error',
  MISSING_HANDOFF: 'error',
  HANDOFF_MISMATCH: 'error',
  SCENARIO_COLLISION: 'error',
  DUPLICATE_VERSION: 'error',
  MISSING_RELEASE: 'error',
  MISSING_RECEIPT: 'error',
  RECEIPT_MISMATCH: 'error',
  APPROVAL_MISMATCH: 'error',
  MISSING_ROLLBACK_RECORD: 'error',
  BAD_SIGNATURE: 'error',
  MISSING_SIGNATURE: 'error',
  SIGNER_MISMATCH: 'error',
  ALLOWED_SIGNERS_MISMATCH: 'error',
  ALLOWED_SIGNERS_NOT_ANCHORED: 'error',
  MISSING_ALLOWED_SIGNERS: 'error',
  MISSING_REGISTRY: 'error',
  STATE_CHAIN_BROKEN: 'error',
  MISSING_STATE_CHAIN: 'error',
  SIGNED_FILE_MISSING: 'error',
  UNSIGNED_POINTER_MOVE: 'error',
  CHAIN_BEHIND_ANCHOR: 'error',
  REGISTRY_MISMATCH: 'error',
  REJECTED_SERVING: 'error',
  DIVERGED: 'error',
  UNSAFE_PATH: 'error',
  GITIGNORE_OUTDATED: 'warning',
  GITATTRIBUTES_MISSING: 'warning',
  INIT_INCOMPLETE: 'warning',
  LEFTOVER_LOCK: 'warning',
  LEFTOVER_TEMP: 'warning',
  ORPHAN_SIGNATURE: 'warning',
  SIGNING_PENDING: 'warning',
  CHAIN_PENDING: 'warning',
  ANCHOR_BEHIND: 'warning',
  LIFECYCLE_PENDING: 'warning',
  MISSING_LEDGER_COPY: 'warning',
  MISSING_RECORD: 'warning',
  MISSING_RUNTIME: 'warning',
  REBIND_PENDING: 'warning',
  RECORD_HISTORY_PENDING: 'warning',
  CURATION_PENDING: 'warning',
  HANDOFF_PENDING: 'warning',
  REGISTRY_PENDING: 'warning',
  LEGACY_EVIDENCE: 'warning',
  RUNTIME_ORPHAN: 'warning',
  RECORD_BEHIND_EVIDENCE: 'warning',
  REPLAY_TOLERANCE: 'warning',
  SCENARIO_LABEL: 'warning',
  STALE_MIRROR: 'warning',
  SYMLINK: 'warning',
  UNSEALED_TRIALS: 'warning',
  MOVE_PENDING: 'warning',
  EXPIRED_UNAPPROVED: 'warning',
  NEVER_SERVED: 'warning',
  TERMINAL_PENDING: 'warning',
  FOREIGN_POINTER_MOVE: 'note',
  CLOCK_SKEW: 'note',
  ELEMENT_STATES: 'note',
  SELF_ANCHORED: 'note',
  REPLAY_ONLY: 'note',
} as const;

type FindingOf<L> = {[K in keyof typeof VERIFY_FINDINGS]: (typeof VERIFY_FINDINGS)[K] extends L ? K : never};
export type VerifyErrorFinding = FindingOf<'error'>[keyof typeof VERIFY_FINDINGS];
export type VerifyWarningFinding = FindingOf<'warning'>[keyof typeof VERIFY_FINDINGS];
export type VerifyNoteFinding = FindingOf<'note'>[keyof typeof VERIFY_FINDINGS];

export class AutoctxError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, data?: Record<string, unknown>) {
    super(message);
    this.name = 'AutoctxError';
    this.code = code;
    this.exitCode = ERROR_CODES[code];
    this.data = data;
  }

  toJSON(): {code: ErrorCode; message: string; exit_code: ExitCode; data?: Record<string, unknown>} {
    return {code: this.code, message: this.message, exit_code: this.exitCode, ...(this.data ? {data: this.data} : {})};
  }
}

/** True for any AutoctxError, also across module realms (jest), by shape. */
export function isAutoctxError(error: unknown): error is AutoctxError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as {name?: unknown}).name === 'AutoctxError' &&
    typeof (error as {code?: unknown}).code === 'string' &&
    (error as {code: string}).code in ERROR_CODES
  );
}

export function fail(code: ErrorCode, message: string, data?: Record<string, unknown>): never {
  throw new AutoctxError(code, message, data);
}

/**
 * The one rule for a catch: it handles only the errors it expects and rethrows everything else, so a programming
 * error (a TypeError, a bug's own throw) is never swallowed. Call it first in the catch, naming what is expected, for
 * example `rethrowUnless(error, isAutoctxError, isSystemError)`.
 */
export function rethrowUnless<T>(error: unknown, expected: (error: unknown) => error is T): asserts error is T;
export function rethrowUnless(error: unknown, ...expected: ReadonlyArray<(error: unknown) => boolean>): void;
export function rethrowUnless(error: unknown, ...expected: ReadonlyArray<(error: unknown) => boolean>): void {
  if (!expected.some((is) => is(error))) throw error;
}

/** An error the operating system gave a file, process or host call (it names its system call), across realms. */
export function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  return typeof error === 'object' && error !== null && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}

/** What JSON.parse throws on text that is not JSON. By name, across realms. */
export function isJsonParseError(error: unknown): error is SyntaxError {
  return typeof error === 'object' && error !== null && (error as Error).name === 'SyntaxError';
}

/** errno codes of a refusing environment, and the stable code each maps to (exit 9). */
const ENVIRONMENT_ERRNO: Record<string, {code: ErrorCode; what: string}> = {
  ENOSPC: {code: 'NO_SPACE', what: 'no space left on the device'},
  EDQUOT: {code: 'NO_SPACE', what: 'disk quota exceeded'},
  EROFS: {code: 'READ_ONLY_FS', what: 'the file system is read-only'},
  EACCES: {code: 'PERMISSION_DENIED', what: 'permission denied'},
  EPERM: {code: 'PERMISSION_DENIED', what: 'operation not permitted'},
  EMFILE: {code: 'TOO_MANY_OPEN_FILES', what: 'too many open files in this process'},
  ENFILE: {code: 'TOO_MANY_OPEN_FILES', what: 'too many open files on the system'},
};

/**
 * A system error the environment raised (ENOSPC, EROFS, EACCES, EPERM, EMFILE, ENFILE, EDQUOT) as a typed error naming
 * the path; anything else is returned as null. `relative` turns the absolute path into the one the user knows.
 */
export function environmentError(error: unknown, relative: (p: string) => string = (p) => p): AutoctxError | null {
  const e = error as NodeJS.ErrnoException | null;
  const mapped = e && typeof e === 'object' && typeof e.code === 'string' ? ENVIRONMENT_ERRNO[e.code] : undefined;
  if (!mapped) return null;
  const where = typeof e!.path === 'string' ? relative(e!.path) : undefined;
  return new AutoctxError(
    mapped.code,
    `${where ?? 'a file'}: ${mapped.what} (${e!.code}); nothing was changed by this command`,
    {
      errno: e!.code,
      ...(where !== undefined ? {file: where} : {}),
      ...(e!.syscall ? {syscall: e!.syscall} : {}),
    },
  );
}

/** The exit code of every result status a command prints: one table, so that no command decides for itself. */
export const RESULT_EXIT = {
  built: EXIT.OK,
  claimed: EXIT.OK,
  empty: EXIT.OK,
  insufficient: EXIT.OK,
  ready: EXIT.OK,
  skipped: EXIT.OK,
  tagged: EXIT.OK,
  untagged: EXIT.OK,
  updated: EXIT.OK,
  written: EXIT.OK,
  named: EXIT.OK,
  applied: EXIT.OK,
  allowed: EXIT.OK,
  blocked: EXIT.REJECTED,
  refused: EXIT.REJECTED,
  started: EXIT.OK,
  sealed: EXIT.OK,
  approved: EXIT.OK,
  sampled: EXIT.OK,
  not_sampled: EXIT.OK,
  confirmed: EXIT.OK,
  exported: EXIT.OK,
  initialized: EXIT.OK,
  installed: EXIT.OK,
  planned: EXIT.OK,
  uninstalled: EXIT.OK,
  materialized: EXIT.OK,
  migrated: EXIT.OK,
  ok: EXIT.OK,
  promoted: EXIT.OK,
  proposed: EXIT.OK,
  reconciled: EXIT.OK,
  nothing: EXIT.OK,
  repaired: EXIT.OK,
  rolled_back: EXIT.OK,
  rolled_over: EXIT.OK,
  screened: EXIT.OK,
  unchanged: EXIT.OK,
  rejected: EXIT.REJECTED,
  inconclusive: EXIT.REJECTED,
  needs_more_evidence: EXIT.NEEDS_MORE_EVIDENCE,
  failed: EXIT.INTEGRITY,
  mismatch: EXIT.INTEGRITY,
} as const satisfies Record<string, ExitCode>;

export type ResultStatus = keyof typeof RESULT_EXIT;

/** Where a command's own verb is the status it reports, success is exit 0 (`reject` answers "rejected"). */
export const RESULT_EXIT_BY_COMMAND: Record<string, Partial<Record<ResultStatus, ExitCode>>> = {
  reject: {rejected: EXIT.OK},
};

/** The exit code for a result's status (see RESULT_EXIT and RESULT_EXIT_BY_COMMAND). */
export function exitCodeForStatus(status: string, command?: string): ExitCode {
  const own = command !== undefined ? RESULT_EXIT_BY_COMMAND[command]?.[status as ResultStatus] : undefined;
  const code = own ?? (RESULT_EXIT as Record<string, ExitCode>)[status];
  if (code === undefined) throw new AutoctxError('INTERNAL', `internal: result status "${status}" has no exit code`);
  return code;
}
