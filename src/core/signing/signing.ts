import {fail} from '../../errors.js';
import {entriesFor, principalAllowed} from '../../model/signing/allowed-signers.js';
import {NAMESPACE} from '../../model/signing/sshsig.js';
import type {ScenarioStore} from '../../store/index.js';
import {readSigningStart} from '../../store/kinds/signing/signing-records.js';
import {publicKeyOf, resolveSigningKey, signDigest, type SigningKey} from './signing-key.js';
import {loadTrust, readAnchor, type Trust} from './trust.js';
import {unsignedPointerMove, walkStateChain} from './verify-state-chain.js';

/**
 * Signing for one writing command (ARCHITECTURE §10.3). In a tree whose
 * signing has started, or with an anchor given, every record it writes of
 * the signed kinds is signed, so it needs a key (SIGNING_KEY_REQUIRED, exit
 * 2, before anything is written) that the tree's proven allowed signers list
 * as the actor (SIGNER_NOT_ACTOR) and, for an approval, as an approver.
 * Broken trust (a hand-edited allowed_signers, one the anchor does not
 * reach) is an integrity error. An unsigned tree signs nothing.
 */
export interface SigningOptions {
  signingKey?: string | undefined;
  allowedSigners?: string | undefined;
  /** The --knowledge given: an anchor inside the root is refused. */
  knowledge?: string | undefined;
}

export interface Signing {
  anchor: string | null;
  trust: Trust | null;
  key: SigningKey | null;
}

/** Every input checked (the anchor file, the key file), nothing read from the tree yet. */
export function signingInputs(options: SigningOptions): {anchor: string | null; key: SigningKey | null} {
  return {anchor: readAnchor(options.allowedSigners, options.knowledge), key: resolveSigningKey(options.signingKey)};
}

export function prepareSigning(
  store: ScenarioStore,
  options: SigningOptions,
  who: {actor: string | null; role: 'sign' | 'approve'},
  inputs = signingInputs(options),
): Signing {
  const {anchor, key} = inputs;
  if (!readSigningStart(store) && anchor === null) return {anchor, trust: null, key: null};
  const trust = loadTrust(store, anchor);
  if (trust.problems.length > 0) {
    const p = trust.problems[0]!;
    fail('INTEGRITY', `${p.message}; nothing was written (run autoctx verify)`, {file: store.guard.relative(p.file)});
  }
  // A chain that forked or lost a change is never extended; a pointer no signed change wrote is never moved on from (or
  // signed over).
  const walk = walkStateChain(store);
  if (walk.problems.length > 0)
    fail('INTEGRITY', `${walk.problems[0]!.message}; nothing was written (run autoctx verify)`, {
      file: store.guard.relative(walk.problems[0]!.file),
    });
  const moved = unsignedPointerMove(store, walk.latest);
  if (moved)
    fail('INTEGRITY', `${moved}; nothing was written (run autoctx verify)`, {
      file: store.guard.relative(store.paths.active),
    });
  if (!key)
    fail(
      'SIGNING_KEY_REQUIRED',
      `scenario "${store.scenario}" is signed: give --signing-key FILE (or $AUTOCTX_SIGNING_KEY, or ` +
        `signing_key in the user config)`,
    );
  const pub = publicKeyOf(key);
  // The key's lines valid now (valid-after and valid-before are checked at the time it signs).
  const lines = entriesFor(trust.entries, pub, NAMESPACE, Date.now());
  if (lines.length === 0)
    fail(
      'SIGNER_NOT_ACTOR',
      `signing key ${key.file} is not in the scenario's allowed_signers, or not valid now (its ` +
        `valid-after, valid-before or namespaces)`,
      {file: key.file},
    );
  if (who.actor !== null && !principalAllowed(lines, who.actor, who.role)) {
    fail(
      'SIGNER_NOT_ACTOR',
      `signing key ${key.file} may not ${who.role === 'approve' ? 'approve' : 'sign'} as ${who.actor} (its ` +
        `allowed_signers lines name ${lines.map((l) => l.principals).join(', ')}` +
        `${who.role === 'approve' ? ' and must list the autoctx-approver namespace' : ''}); give --actor as ` +
        `its principal`,
    );
  }
  store.signer = (kind, digest) => signDigest(key, kind, digest);
  // Every step of this command that changes the state is chained and signed as the actor (or the key's first
  // principal).
  store.chainActor = who.actor ?? lines[0]!.principals.split(',')[0]!.trim();
  return {anchor, trust, key};
}
