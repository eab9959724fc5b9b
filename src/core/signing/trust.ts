import path from 'node:path';
import {sha256Hex} from '../../canonical/index.js';
import {fail, isAutoctxError, rethrowUnless} from '../../errors.js';
import {parseAllowedSigners, type SignerEntry} from '../../model/signing/allowed-signers.js';
import {anchorSigners} from '../../model/signing/anchor-pins.js';
import {actsAs, checkSignature} from '../../model/signing/signature-check.js';
import {signedMessage} from '../../model/signing/sshsig.js';
import type {ScenarioStore} from '../../store/index.js';
import {readSignature, type SignedKind} from '../../store/kinds/signing/signatures.js';
import {
  listChangeSeqs,
  readAllowedSignersText,
  readSignersChange,
  readSigningStart,
  type SigningStart,
} from '../../store/kinds/signing/signing-records.js';
import {readBytes} from '../../store/files/fs.js';
import {isInsideFolder, readInputText} from '../../store/io/inputs.js';
import {knowledgeRootFrom} from '../../store/index.js';

/**
 * The trust a scenario's signatures are checked against (ARCHITECTURE
 * §10.3). The trust anchor is never taken from the tree alone: given one
 * (--allowed-signers FILE or $AUTOCTX_ALLOWED_SIGNERS, kept outside the
 * repository), the tree's allowed_signers must be a version of its signed
 * history at or after the anchor's. Without one, the tree is checked against
 * its own file and is said to be self-anchored.
 */
export interface TrustProblem {
  file: string;
  code:
    | 'ALLOWED_SIGNERS_MISMATCH'
    | 'ALLOWED_SIGNERS_NOT_ANCHORED'
    | 'MISSING_ALLOWED_SIGNERS'
    | 'BAD_SIGNATURE'
    | 'MISSING_SIGNATURE'
    | 'SIGNER_MISMATCH';
  message: string;
}

export interface Trust {
  /** The lines records are checked against (the tree's current, proven version); empty when signing has not started. */
  entries: SignerEntry[];
  anchored: boolean;
  start: SigningStart | null;
  /** Records made before signing started, by file (relative to the scenario folder) and SHA-256. */
  unsigned: Map<string, string>;
  problems: TrustProblem[];
  /** The file lags its signed history after a crash (a warning; the trust is the history's last version). */
  pending?: string;
  /**
   * The anchor is a version of the history but not its newest: a key revoked since is trusted only as far as the tree
   * says (a warning).
   */
  anchorBehind?: string;
}

/**
 * The anchor's text: --allowed-signers FILE, else $AUTOCTX_ALLOWED_SIGNERS; null without one. A malformed or missing
 * file is exit 2; so is one inside the knowledge root (`knowledge`: the --knowledge given, resolved as every command
 * resolves it), links resolved: whoever can write the tree could rewrite it, so it would anchor nothing.
 */
export function readAnchor(
  given: string | undefined,
  knowledge: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  const file = given ?? env.AUTOCTX_ALLOWED_SIGNERS;
  if (file === undefined || file === '') return null;
  const root = knowledgeRootFrom(knowledge, env);
  if (isInsideFolder(file, root)) {
    fail(
      'INPUT_UNSAFE',
      `the trust anchor ${file} (${given !== undefined ? '--allowed-signers' : '$AUTOCTX_ALLOWED_SIGNERS'})` +
        ` is inside the knowledge root ${root}: whoever can write the tree could rewrite it; keep the anchor ` +
        `outside the repository`,
      {file},
    );
  }
  const text = readInputText(path.resolve(file));
  parseAllowedSigners(text, file);
  return text;
}

function rel(store: ScenarioStore, file: string): string {
  return store.guard.relative(file);
}

function parsed(text: string, what: string): SignerEntry[] | string {
  try {
    return parseAllowedSigners(text, what);
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    return (error as Error).message;
  }
}

/** Check one signed record's signature: against `entries`, at its signed time, as its named principal (and role). */
export function signatureProblem(
  store: ScenarioStore,
  entries: readonly SignerEntry[],
  file: string,
  kind: SignedKind,
  at: string | null,
  principal: string | null,
  role: 'sign' | 'approve' = 'sign',
): TrustProblem | null {
  const sig = readSignature(store, file);
  if (sig === null)
    return {
      file: `${file}.sig`,
      code: 'MISSING_SIGNATURE',
      message: `${rel(store, file)} is not signed (${rel(store, file)}.sig is missing)`,
    };
  const bytes = readBytes(store.guard, file);
  if (!bytes) return null;
  const when = at !== null && Number.isFinite(Date.parse(at)) ? Date.parse(at) : Date.now();
  const check = checkSignature(entries, sig, signedMessage(kind, sha256Hex(bytes)), when);
  if (!check.ok)
    return {
      file,
      code: 'BAD_SIGNATURE',
      message: `${rel(store, file)} (its signature ${rel(store, file)}.sig): ${check.problem}`,
    };
  if (principal !== null && !actsAs(check, principal, role)) {
    return {
      file,
      code: 'SIGNER_MISMATCH',
      message:
        `${rel(store, file)} names ${principal}, but it is signed by key ${check.fingerprint}, which is not ` +
        `${role === 'approve' ? 'an approver principal' : 'a principal'} ${principal}`,
    };
  }
  return null;
}

/**
 * The scenario's signing history read and checked: the start record, signed
 * by a principal of the version it starts with; each change, signed by a
 * principal of the version before; the file equal to the last version; and,
 * with an anchor, the anchor one of those versions.
 */
export function loadTrust(store: ScenarioStore, pinned: string | null): Trust {
  // The keys of the anchor: its text without the chain pins it may carry.
  const anchor = pinned === null ? null : anchorSigners(pinned);
  const problems: TrustProblem[] = [];
  const start = readSigningStart(store);
  const text = readAllowedSignersText(store);
  const trust: Trust = {
    entries: [],
    anchored: anchor !== null,
    start,
    unsigned: new Map(start?.unsigned.map((u) => [u.file, u.sha256]) ?? []),
    problems,
  };
  if (!start) {
    if (anchor !== null)
      problems.push({
        file: store.paths.signingStart,
        code: 'MISSING_ALLOWED_SIGNERS',
        message:
          `an allowed signers anchor is given, but scenario "${store.scenario}" has no signing history ` +
          `(${rel(store, store.paths.signingStart)}` +
          `${text === null ? ` and ${rel(store, store.paths.allowedSigners)} are` : ' is'} missing): nothing ` +
          `it holds can be authenticated`,
      });
    else if (text !== null)
      problems.push({
        file: store.paths.signingStart,
        code: 'MISSING_ALLOWED_SIGNERS',
        message:
          `${rel(store, store.paths.allowedSigners)} exists, but ${rel(store, store.paths.signingStart)} is ` +
          `missing: signing history was deleted`,
      });
    return trust;
  }
  const versions: string[] = [start.allowed_signers];
  let current = parsed(start.allowed_signers, rel(store, store.paths.signingStart));
  if (typeof current === 'string') {
    problems.push({file: store.paths.signingStart, code: 'ALLOWED_SIGNERS_MISMATCH', message: current});
    return trust;
  }
  const first = signatureProblem(
    store,
    current,
    store.paths.signingStart,
    'signing-start',
    start.started_at,
    start.actor,
  );
  if (first) problems.push(first);
  const seqs = listChangeSeqs(store);
  for (let i = 0; i < seqs.length; i++) {
    const file = store.paths.signersChange(i + 1);
    if (seqs[i] !== i + 1) {
      problems.push({
        file,
        code: 'ALLOWED_SIGNERS_MISMATCH',
        message: `${rel(store, file)} is missing: the signers changes must run from 1 without a gap`,
      });
      break;
    }
    // A change that cannot be read is named by its own file (not by the start record whose trust it breaks).
    let c;
    try {
      c = readSignersChange(store, i + 1)!;
    } catch (error) {
      if (!isAutoctxError(error)) throw error;
      problems.push({file, code: 'ALLOWED_SIGNERS_MISMATCH', message: `${rel(store, file)}: ${error.message}`});
      break;
    }
    if (c.previous_sha256 !== sha256Hex(versions.at(-1)!))
      problems.push({
        file,
        code: 'ALLOWED_SIGNERS_MISMATCH',
        message: `${rel(store, file)} does not change the version before it (previous_sha256 differs)`,
      });
    const bad = signatureProblem(store, current, file, 'signers-change', c.changed_at, c.actor);
    if (bad)
      problems.push({
        ...bad,
        message: `${bad.message} (a change must be signed by a principal of the version before it)`,
      });
    const next = parsed(c.allowed_signers, rel(store, file));
    if (typeof next === 'string') {
      problems.push({file, code: 'ALLOWED_SIGNERS_MISMATCH', message: next});
      break;
    }
    versions.push(c.allowed_signers);
    current = next;
  }
  // The file is written after the record that makes it a version: a crash in between leaves it one version behind (or
  // absent at the start).
  const behind =
    (text === null && versions.length === 1) ||
    (text !== null && versions.length > 1 && sha256Hex(text) === sha256Hex(versions.at(-2)!));
  if (behind)
    trust.pending =
      `${rel(store, store.paths.allowedSigners)} is ${text === null ? 'missing' : 'one version behind'} ` +
      `its signed history (a signing command cut short); the same command run again writes it`;
  else if (text === null)
    problems.push({
      file: store.paths.allowedSigners,
      code: 'MISSING_ALLOWED_SIGNERS',
      message:
        `${rel(store, store.paths.allowedSigners)} is missing, but signing started in ` +
        `${rel(store, store.paths.signingStart)}`,
    });
  else if (sha256Hex(text) !== sha256Hex(versions.at(-1)!))
    problems.push({
      file: store.paths.allowedSigners,
      code: 'ALLOWED_SIGNERS_MISMATCH',
      message:
        `${rel(store, store.paths.allowedSigners)} is not the version its signed history ends with: it was ` +
        `changed by hand, without a signed change (autoctx signing signers)`,
    });
  if (anchor !== null && !versions.some((v) => sha256Hex(v) === sha256Hex(anchor))) {
    problems.push({
      file: store.paths.allowedSigners,
      code: 'ALLOWED_SIGNERS_NOT_ANCHORED',
      message:
        `${rel(store, store.paths.allowedSigners)} neither equals the anchor given nor descends from it ` +
        `through signed changes: the tree's keys are not the ones the anchor trusts`,
    });
  }
  if (anchor !== null) {
    const at = versions.findIndex((v) => sha256Hex(v) === sha256Hex(anchor));
    if (at >= 0 && at < versions.length - 1)
      trust.anchorBehind =
        `the anchor given is version ${at + 1} of ${versions.length} of the scenario's allowed signers: the ` +
        `signed changes after it (${rel(store, store.paths.signersChange(at + 1))} on) are trusted on the ` +
        `tree's word, so deleting the newest of them with the changes after them would go unseen. Keep the ` +
        `anchor at the newest version (copy ${rel(store, store.paths.allowedSigners)} out of the tree after ` +
        `each autoctx signing signers)`;
  }
  trust.entries =
    problems.length === 0 ? current : anchor !== null ? (parsed(anchor, 'anchor') as SignerEntry[]) : current;
  return trust;
}

/**
 * Whether a record must be signed: signing started (or an anchor is given) and it is not one of the records made before
 * signing started.
 */
export function mustBeSigned(store: ScenarioStore, trust: Trust, file: string): boolean {
  if (!trust.start && !trust.anchored) return false;
  const key = path.relative(store.paths.dir, file);
  const before = trust.unsigned.get(key);
  if (before === undefined) return true;
  const bytes = readBytes(store.guard, file);
  return !bytes || sha256Hex(bytes) !== before;
}
