import {entriesFor, principalAllowed, type SignerEntry} from './allowed-signers.js';
import {NAMESPACE, fingerprint, parseSignature, signatureValid} from './sshsig.js';

/**
 * One detached signature checked against allowed signers at a time: the
 * signature parses, is in autoctx's namespace, verifies over the message
 * with the key it carries, and that key has a line valid then. The answer
 * names the lines (the principals it may act as) or what is wrong. Pure.
 */
export type SignatureCheck = {ok: true; lines: SignerEntry[]; fingerprint: string} | {ok: false; problem: string};

export function checkSignature(
  entries: readonly SignerEntry[],
  armored: string,
  message: Buffer,
  at: number,
): SignatureCheck {
  const sig = parseSignature(armored);
  if (typeof sig === 'string') return {ok: false, problem: `the signature is ${sig}`};
  if (sig.namespace !== NAMESPACE)
    return {ok: false, problem: `the signature is in namespace ${JSON.stringify(sig.namespace)}, not "${NAMESPACE}"`};
  if (!signatureValid(sig, message))
    return {
      ok: false,
      problem: 'the signature does not verify over this record (it was made for other bytes, or edited)',
    };
  const fp = fingerprint(sig.publicKey);
  const known = entries.filter((e) => e.key.equals(sig.publicKey));
  if (known.length === 0)
    return {ok: false, problem: `it was made by key ${fp}, which the allowed signers do not list`};
  const lines = entriesFor(entries, sig.publicKey, NAMESPACE, at);
  if (lines.length === 0)
    return {
      ok: false,
      problem:
        `key ${fp} is not allowed to sign for "${NAMESPACE}" at ${new Date(at).toISOString()} (its ` +
        `namespaces, valid-after or valid-before)`,
    };
  return {ok: true, lines, fingerprint: fp};
}

/** Whether a check's key may act as this principal (and, for approvals, approve). */
export function actsAs(check: SignatureCheck, principal: string, role: 'sign' | 'approve' = 'sign'): boolean {
  return check.ok && principalAllowed(check.lines, principal, role);
}
