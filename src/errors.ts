/**
 * Every error autoctx raises on purpose: a stable code, the exit code it maps to,
 * a one-line message and optional structured data. The code → exit-code table is
 * the single source of truth for the CLI and the README.
 */

/** Exit codes, as documented in the README. */
export const EXIT = {
  OK: 0,
  INTERNAL: 1,
  BAD_INPUT: 2,
  REJECTED: 3,
  NEEDS_MORE_EVIDENCE: 4,
  AUDIT_HOLD: 5,
  ACTIVE_MOVED: 6,
  LOCKED: 7,
  INTEGRITY: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Stable error codes. Never rename one: scripts match on them. */
export const ERROR_CODES = {
  INTERNAL: EXIT.INTERNAL,
  USAGE: EXIT.BAD_INPUT,
  INVALID_INPUT: EXIT.BAD_INPUT,
  INPUT_NOT_FOUND: EXIT.BAD_INPUT,
  INVALID_JSON: EXIT.BAD_INPUT,
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
  INVALID_TRANSITION: EXIT.BAD_INPUT,
  NO_ROLLBACK_TARGET: EXIT.BAD_INPUT,
  NOT_SERVEABLE: EXIT.BAD_INPUT,
  TARGET_EXISTS: EXIT.BAD_INPUT,
  POLICY_MISMATCH: EXIT.BAD_INPUT,
  PLAN_UNREACHABLE: EXIT.BAD_INPUT,
  FIXTURE_MISMATCH: EXIT.BAD_INPUT,
  NOT_CONFIRMED: EXIT.BAD_INPUT,
  CAMPAIGN_POLICY_MISMATCH: EXIT.BAD_INPUT,
  CAMPAIGN_FIXTURE_REUSE: EXIT.BAD_INPUT,
  CAMPAIGN_NOT_FOUND: EXIT.BAD_INPUT,
  INGEST_CONFLICT: EXIT.BAD_INPUT,
  AUDIT_HOLD: EXIT.AUDIT_HOLD,
  ACTIVE_MOVED: EXIT.ACTIVE_MOVED,
  LOCKED: EXIT.LOCKED,
  LOCK_LOST: EXIT.LOCKED,
  CORRUPT_FILE: EXIT.INTEGRITY,
  IMMUTABLE_CONFLICT: EXIT.INTEGRITY,
  UNSAFE_PATH: EXIT.INTEGRITY,
  INTEGRITY: EXIT.INTEGRITY,
  PLAN_CHANGED: EXIT.INTEGRITY,
  EVALUATOR_CHANGED: EXIT.INTEGRITY,
  AUDIT_CHANGED: EXIT.INTEGRITY,
  EVALUATOR_FAILED: EXIT.INTEGRITY,
  REPLAY_MISMATCH: EXIT.INTEGRITY,
  CAMPAIGN_LEGACY: EXIT.INTEGRITY,
} as const satisfies Record<string, ExitCode>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * What `autoctx verify` reports, besides the error codes above (a file that
 * cannot be read is reported with the code its reader raised). "error" findings
 * make verify exit 8; "warning" findings name a state that an interrupted run
 * leaves and the same command run again, or `autoctx repair`, completes.
 */
export const VERIFY_FINDINGS = {
  DIGEST_MISMATCH: 'error',
  DUPLICATE_PAIR: 'error',
  EVIDENCE_SEAL_MISMATCH: 'error',
  GITIGNORE_INCOMPLETE: 'error',
  LEDGER_MISMATCH: 'error',
  LINEAGE_MISMATCH: 'error',
  MIRROR_MISMATCH: 'error',
  MISSING_BUNDLE: 'error',
  MISSING_POINTER: 'error',
  MISSING_PROMOTION: 'error',
  REPLAY_MISMATCH: 'error',
  UNSAFE_PATH: 'error',
  INIT_INCOMPLETE: 'warning',
  LEFTOVER_LOCK: 'warning',
  LEFTOVER_TEMP: 'warning',
  LIFECYCLE_PENDING: 'warning',
  MISSING_LEDGER_COPY: 'warning',
  MISSING_RECORD: 'warning',
  RECORD_BEHIND_EVIDENCE: 'warning',
  REPLAY_TOLERANCE: 'warning',
  SCENARIO_LABEL: 'warning',
  STALE_MIRROR: 'warning',
  SYMLINK: 'warning',
  UNSEALED_TRIALS: 'warning',
} as const;

export type VerifyErrorFinding = {[K in keyof typeof VERIFY_FINDINGS]: (typeof VERIFY_FINDINGS)[K] extends 'error' ? K : never}[keyof typeof VERIFY_FINDINGS];
export type VerifyWarningFinding = {[K in keyof typeof VERIFY_FINDINGS]: (typeof VERIFY_FINDINGS)[K] extends 'warning' ? K : never}[keyof typeof VERIFY_FINDINGS];

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
