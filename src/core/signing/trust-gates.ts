import {fail, isJsonParseError, rethrowUnless} from '../../errors.js';
import type {ScenarioStore} from '../../store/index.js';
import {readBytes} from '../../store/files/fs.js';
import {mustBeSigned, signatureProblem, type Trust} from './trust.js';

/**
 * The gates' use of signatures: a record a decision rests on must carry a valid signature in a signed tree (exit 8
 * otherwise).
 */
export function requireSigned(
  store: ScenarioStore,
  trust: Trust,
  r: {
    file: string;
    kind: Parameters<typeof signatureProblem>[3];
    at: string | null;
    principal: string | null;
    role?: 'sign' | 'approve';
  },
): void {
  const hasSig = readBytes(store.guard, `${r.file}.sig`) !== null;
  if (!hasSig && !mustBeSigned(store, trust, r.file)) return;
  const problem = signatureProblem(store, trust.entries, r.file, r.kind, r.at, r.principal, r.role ?? 'sign');
  if (problem)
    fail('INTEGRITY', `${problem.message}; nothing was changed (run autoctx verify)`, {
      file: store.guard.relative(problem.file),
      reason: problem.code,
    });
}

/** The candidate's trial seal, signed by an allowed signer at the time it records. */
export function requireSignedSeal(store: ScenarioStore, trust: Trust, digest: string): void {
  const file = store.paths.evidenceSeal(digest);
  const bytes = readBytes(store.guard, file);
  let at: string | null = null;
  try {
    at = bytes ? ((JSON.parse(bytes.toString('utf8')) as {sealed_at?: string} | null)?.sealed_at ?? null) : null;
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    at = null;
  }
  requireSigned(store, trust, {file, kind: 'trial-seal', at, principal: null});
}
