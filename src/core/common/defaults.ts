/** Seconds a command waits for a lock before LOCKED (exit 7), unless --lock-timeout says otherwise. */
export const DEFAULT_LOCK_TIMEOUT_SECONDS = 30;

/** Seconds an evaluator arm or an audit may take before it is stopped, unless --timeout says otherwise. */
export const DEFAULT_EVALUATOR_TIMEOUT_SECONDS = 120;
