/**
 * The environment variable that pins every delivery of a session to one exact bundle: the agent evaluator sets it for
 * each arm's session, so that the session gets that arm's bundle, rendered and framed as a real session gets it.
 */
export const PIN_VARIABLE = 'AUTOCTX_HOOK_BUNDLE';

/** The pinned bundle's digest; undefined when unset, null when set to anything but a 64-hex digest. */
export function pinnedBundle(env: NodeJS.ProcessEnv): string | null | undefined {
  const value = env[PIN_VARIABLE];
  if (value === undefined || value === '') return undefined;
  return /^[0-9a-f]{64}$/.test(value) ? value : null;
}
