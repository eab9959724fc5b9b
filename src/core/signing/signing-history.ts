import path from 'node:path';
import {sha256Hex} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {parseAllowedSigners, principalAllowed} from '../../model/signing/allowed-signers.js';
import {anchorSigners} from '../../model/signing/anchor-pins.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import type {ScenarioStore} from '../../store/index.js';
import {readBytes} from '../../store/files/fs.js';
import {readInputText} from '../../store/io/inputs.js';
import {
  listChangeSeqs,
  readAllowedSignersText,
  readSignersChange,
  readSigningStart,
  writeSignersChange,
  writeSigningStart,
} from '../../store/kinds/signing/signing-records.js';
import {resolveActor} from '../common/actor.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {publicKeyOf, resolveSigningKey, signDigest, type SigningKey} from './signing-key.js';
import {loadTrust, readAnchor} from './trust.js';
import {signedRecords} from './signed-records.js';
import {unsignedPointerMove, walkStateChain} from './verify-state-chain.js';

/**
 * `autoctx signing start` and `autoctx signing signers`: where a scenario's
 * signing begins (the allowed_signers it starts with, and the records made
 * before it, listed by digest so they stay valid unsigned), and each later
 * change of its allowed_signers, signed by a principal of the version before.
 */
export interface SigningHistoryOptions extends StoreOptions {
  from: string;
  signingKey?: string | undefined;
  allowedSigners?: string | undefined;
  actor?: string | undefined;
}

export interface SigningHistoryResult {
  status: 'started' | 'updated' | 'unchanged';
  scenario: string;
  allowed_signers_sha256: string;
  /** start: the records made before signing started, left unsigned and listed; signers: the change's number. */
  unsigned: number;
  change_seq: number | null;
}

function readFrom(file: string): string {
  const text = readInputText(path.resolve(file));
  if (parseAllowedSigners(text, file).length === 0) fail('INVALID_INPUT', `${file} lists no signer`, {file});
  return text;
}

/** The key must be listed in `text` as the actor. */
function keyActs(key: SigningKey, text: string, actor: string, what: string): void {
  const lines = parseAllowedSigners(text, what).filter((e) => e.key.equals(publicKeyOf(key)));
  if (!principalAllowed(lines, actor, 'sign'))
    fail(
      'SIGNER_NOT_ACTOR',
      `signing key ${key.file} is not listed in ${what} as ${actor}; give --actor as its principal`,
      {file: key.file},
    );
}

function requireKey(options: SigningHistoryOptions): SigningKey {
  const key = resolveSigningKey(options.signingKey);
  if (!key)
    fail(
      'SIGNING_KEY_REQUIRED',
      'signing needs a key: give --signing-key FILE (or $AUTOCTX_SIGNING_KEY, or signing_key in the user config)',
    );
  return key;
}

/** Every input of a signing-history command, checked before anything is locked or written. */
function inputsOf(options: SigningHistoryOptions) {
  const text = readFrom(options.from);
  const key = requireKey(options);
  const anchor = readAnchor(options.allowedSigners, options.knowledge);
  lockTimeout(options);
  const store = openScenario(options);
  return {text, key, anchor, store, actor: resolveActor(options.actor, store.paths.dir)};
}

export async function signingStart(options: SigningHistoryOptions): Promise<SigningHistoryResult> {
  const {text, key, anchor, store, actor} = inputsOf(options);
  keyActs(key, text, actor, options.from);
  if (anchor !== null && sha256Hex(anchorSigners(anchor)) !== sha256Hex(text))
    fail(
      'INVALID_INPUT',
      `--from ${options.from} is not the anchor given: signing starts with the allowed signers the anchor holds`,
    );
  return store.withLock(lockTimeout(options), () => {
    // The signed state chain begins in this step (or in the run again of a start cut short), with a snapshot of the
    // state signing starts from.
    store.signer = (kind, digest) => signDigest(key, kind, digest);
    store.chainActor = actor;
    const existing = readSigningStart(store);
    if (existing) {
      // A start cut short after its record: the file it starts with is written from it.
      if (existing.allowed_signers_sha256 !== sha256Hex(text))
        fail(
          'INVALID_INPUT',
          `signing already started in scenario "${store.scenario}" ` +
            `(${store.guard.relative(store.paths.signingStart)}); change the signers with autoctx signing ` +
            `signers`,
        );
      if (readAllowedSignersText(store) === null && listChangeSeqs(store).length === 0)
        store.writer.replace(store.paths.allowedSigners, existing.allowed_signers);
      return {
        status: 'unchanged',
        scenario: store.scenario,
        allowed_signers_sha256: existing.allowed_signers_sha256,
        unsigned: existing.unsigned.length,
        change_seq: null,
      };
    }
    if (readAllowedSignersText(store) !== null)
      fail(
        'INVALID_INPUT',
        `${store.guard.relative(store.paths.allowedSigners)} exists without a signing history; remove it, ` +
          `or give it as --from`,
      );
    const unsigned = signedRecords(store)
      .filter((r) => readBytes(store.guard, `${r.file}.sig`) === null)
      .flatMap((r) => {
        const bytes = readBytes(store.guard, r.file);
        return bytes ? [{file: path.relative(store.paths.dir, r.file), sha256: sha256Hex(bytes)}] : [];
      });
    writeSigningStart(store, {
      schema_version: 1,
      scenario: store.scenario,
      allowed_signers: text,
      allowed_signers_sha256: sha256Hex(text),
      actor,
      started_at: isoTimestamp(now(options)),
      unsigned,
    });
    return {
      status: 'started',
      scenario: store.scenario,
      allowed_signers_sha256: sha256Hex(text),
      unsigned: unsigned.length,
      change_seq: null,
    };
  });
}

export async function signingSigners(options: SigningHistoryOptions): Promise<SigningHistoryResult> {
  const {text, key, anchor, store, actor} = inputsOf(options);
  return store.withLock(lockTimeout(options), () => {
    if (!readSigningStart(store))
      fail('INVALID_INPUT', `signing has not started in scenario "${store.scenario}"; run autoctx signing start`);
    // Its chain entry names what a step cut short left; never a pointer no signed record vouches for.
    const moved = unsignedPointerMove(store, walkStateChain(store).latest);
    if (moved)
      fail('INTEGRITY', `${moved}; nothing was written (run autoctx verify)`, {
        file: store.guard.relative(store.paths.active),
      });
    const seqs = listChangeSeqs(store);
    const last = seqs.length > 0 ? readSignersChange(store, seqs.at(-1)!) : null;
    // A change cut short after its record: the file is written from it.
    if (last && last.allowed_signers_sha256 === sha256Hex(text) && readAllowedSignersText(store) !== text)
      store.writer.replace(store.paths.allowedSigners, last.allowed_signers);
    const trust = loadTrust(store, anchor);
    if (trust.problems.length > 0)
      fail('INTEGRITY', `${trust.problems[0]!.message}; nothing was written (run autoctx verify)`, {
        file: store.guard.relative(trust.problems[0]!.file),
      });
    const current = readAllowedSignersText(store)!;
    // The same change run again: a key that acts in it names what a run cut short left unchained.
    if (
      parseAllowedSigners(current, 'allowed_signers').some(
        (e) => e.key.equals(publicKeyOf(key)) && principalAllowed([e], actor, 'sign'),
      )
    ) {
      store.signer = (kind, digest) => signDigest(key, kind, digest);
      store.chainActor = actor;
    }
    if (sha256Hex(current) === sha256Hex(text))
      return {
        status: 'unchanged',
        scenario: store.scenario,
        allowed_signers_sha256: sha256Hex(text),
        unsigned: 0,
        change_seq: last?.seq ?? null,
      };
    keyActs(key, current, actor, store.guard.relative(store.paths.allowedSigners));
    store.signer = (kind, digest) => signDigest(key, kind, digest);
    store.chainActor = actor;
    const seq = seqs.length + 1;
    writeSignersChange(store, {
      schema_version: 1,
      seq,
      scenario: store.scenario,
      previous_sha256: sha256Hex(current),
      allowed_signers: text,
      allowed_signers_sha256: sha256Hex(text),
      actor,
      changed_at: isoTimestamp(now(options)),
    });
    return {
      status: 'updated',
      scenario: store.scenario,
      allowed_signers_sha256: sha256Hex(text),
      unsigned: 0,
      change_seq: seq,
    };
  });
}
