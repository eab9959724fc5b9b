import {checkoutDamageOf} from '../../store/files/checkout-damage.js';
import path from 'node:path';
import {sha256Hex} from '../../canonical/index.js';
import {fail, isAutoctxError} from '../../errors.js';
import {exists, readBytes} from '../../store/files/fs.js';
import type {ScenarioStore} from '../../store/index.js';
import {chainName, chainState, filesUnder} from '../../store/kinds/signing/state-chain.js';
import type {SignedKind} from '../../store/kinds/signing/signatures.js';
import {loadTrust, signatureProblem, type Trust} from './trust.js';
import {unsignedPointerMove} from './verify-state-chain.js';

/**
 * In a signed tree (signing started) what serves is what the signed state
 * chain covers: active.json, every file of releases/ (descriptors,
 * registries, receipts) and the bootstrap curation are, byte for byte, what the newest signed change
 * that wrote each one left. The check is cheap (the chain's entries read,
 * the serving files hashed, no signature checked: verify checks those), so
 * every reader of what serves (routing, recall, bootstrap, the hooks) makes
 * it before it serves. The one exception is a signed step cut short before
 * its chain entry: a pointer its signed move record vouches for, and
 * release files beside a signed receipt the chain does not name yet (the
 * next signed command names them); only then is a signature checked (in
 * process, against the tree's allowed signers). Anything else is refused.
 */
export function unsignedServing(store: ScenarioStore): {file: string; message: string} | null {
  if (!exists(store.paths.signingStart)) return null;
  const rel = (f: string) => store.guard.relative(f);
  let latest: Map<string, string | null>;
  try {
    latest = chainState(store, false).latest;
  } catch (error) {
    if (!isAutoctxError(error)) throw error;
    return {file: store.paths.stateChainDir, message: error.message};
  }
  if (latest.size === 0)
    return {
      file: store.paths.stateChainDir,
      message:
        `${rel(store.paths.stateChainDir)} is missing, but signing started in scenario "${store.scenario}": ` +
        `nothing that serves is covered by a signed change (run autoctx verify)`,
    };
  // What vouches for a file the chain does not name yet (a signed step cut short): a signature that holds, checked in
  // process.
  let trust: Trust | undefined;
  const vouched = (file: string, kind: SignedKind) => {
    trust ??= loadTrust(store, null);
    return trust.problems.length === 0 && signatureProblem(store, trust.entries, file, kind, null, null) === null;
  };
  const moved = unsignedPointerMove(store, latest, vouched);
  if (moved) return {file: store.paths.active, message: moved};
  const uncovered = [...filesUnder(store.paths.releasesDir), store.paths.curation].filter((f) => {
    const bytes = readBytes(store.guard, f);
    return bytes !== null && latest.get(chainName(store, f)) !== sha256Hex(bytes);
  });
  if (uncovered.length === 0) return null;
  // A signed transition cut short before its chain entry: its receipt is signed, and the next signed command chains it.
  const receipts = store.paths.releaseReceiptsDir + path.sep;
  if (
    uncovered.every((f) => f.startsWith(store.paths.releasesDir + path.sep)) &&
    uncovered.some((f) => f.startsWith(receipts) && exists(`${f}.sig`) && vouched(f, 'release-receipt'))
  )
    return null;
  const file = uncovered[0]!;
  return {
    file,
    message:
      `${rel(file)} is not what the newest signed change ` +
      `left${uncovered.length > 1 ? ` (nor are ${uncovered.length - 1} other release files)` : ''}: in a ` +
      `signed tree every change of what serves is signed. Put back the files the newest signed change ` +
      `names (from git), then change them with autoctx release or the curation commands (tag, reference, ` +
      `grant), with --signing-key`,
  };
}

/**
 * Refuse (UNSIGNED_POINTER_MOVE, exit 8) to serve a signed tree's state the chain does not cover; the command to use
 * named.
 */
export function requireSignedServing(store: ScenarioStore): void {
  const problem = unsignedServing(store);
  if (!problem) return;
  // A checkout that converted line endings, or a merge left unfinished, is named as such, not as an unsigned change.
  const damage = checkoutDamageOf(store.guard, problem.file) ?? checkoutDamageOf(store.guard, store.paths.active);
  if (damage) throw damage;
  if (problem)
    fail('UNSIGNED_POINTER_MOVE', `${problem.message}; nothing is served (run autoctx verify)`, {
      file: store.guard.relative(problem.file),
    });
}
